package kafkabench;

import java.io.FileOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.HashMap;
import java.util.Map;

/**
 * What one producer knows of its own sends, one outcome per sequence, in the files Python's
 * `History.mapped` writes and `History.open_mapped` reads (core/delivery_history.py): four NumPy .npy
 * arrays mapped read-write, so an outcome is in the page cache as soon as it is stored and survives a
 * halt(0) or a kill -9 of this process, and the error names in a text file written as each first appears.
 * Outcomes are stored on the producer's I/O thread (and on the sending thread for a send refused at once):
 * each sequence has one writer, and the error-name table is synchronized.
 */
final class History {
    static final byte UNKNOWN = 0, ACKNOWLEDGED = 1, FAILED = 2, ABORTED = 3;
    static final int FORMAT = 1;
    static final long MAX_COUNT = 1L << 32; // as DeliveryParams.count allows
    static final String META = "history.meta", NAMES = "error_names.txt";

    private long count; // lowered once by endAt
    private final int producer;
    private final Column status, partition, offset, error;
    private final Path namesFile, metaFile;
    private final Map<String, Integer> codes = new HashMap<>(); // guarded by this; 0 is no error

    private History(Path directory, int producer, long count) throws IOException {
        this.count = count;
        this.producer = producer;
        metaFile = directory.resolve(META);
        status = new Column(directory.resolve("status.npy"), "|u1", 1, count);
        partition = new Column(directory.resolve("partition.npy"), "<i4", 4, count);
        offset = new Column(directory.resolve("offset.npy"), "<i8", 8, count);
        error = new Column(directory.resolve("error.npy"), "<u2", 2, count);
        partition.fillOnes(); // -1: no partition, no offset
        offset.fillOnes();
        namesFile = directory.resolve(NAMES);
    }

    /** A history of `count` sequences in `directory` (created), every one unknown to start with. */
    static History mapped(Path directory, int producer, long count) throws IOException {
        Files.createDirectories(directory);
        History history = new History(directory, producer, count);
        history.writeMeta();
        Files.write(history.namesFile, new byte[0]);
        return history;
    }

    /** The producer was told to stop before its count: only the first `sent` sequences were handed to the client.
     *  The files keep their size; the meta says how many of them count (Python's `History.end_at`). */
    void endAt(long sent) throws IOException {
        if (sent < 0 || sent > count) throw new IllegalArgumentException("sent " + sent + ": the history holds " + count);
        count = sent;
        writeMeta();
    }

    private void writeMeta() throws IOException {
        Files.writeString(metaFile, FORMAT + " " + producer + " " + count + "\n", StandardCharsets.US_ASCII);
    }

    void recordAck(long sequence, int partitionNumber, long offsetValue) {
        partition.putInt(sequence, partitionNumber);
        offset.putLong(sequence, offsetValue);
        error.putShort(sequence, (short) 0);
        status.putByte(sequence, ACKNOWLEDGED);
    }

    void recordFailure(long sequence, String errorName) {
        record(sequence, FAILED, errorName);
    }

    /** An answer that says nothing of the outcome (a timeout: the record may be written or not). */
    void recordUnknown(long sequence, String errorName) {
        record(sequence, UNKNOWN, errorName);
    }

    /** Sends whose transaction was aborted; where an acknowledgement put them stays. */
    void recordAborted(long first, long end) {
        for (long sequence = first; sequence < end; sequence++) status.putByte(sequence, ABORTED);
    }

    private void record(long sequence, byte outcome, String errorName) {
        int code = errorCode(errorName); // in the names file before its index is in error.npy
        partition.putInt(sequence, -1);
        offset.putLong(sequence, -1);
        error.putShort(sequence, (short) code);
        status.putByte(sequence, outcome);
    }

    /** The index of an error name (1-based line of the names file), appended to the file on first use. */
    private synchronized int errorCode(String name) {
        Integer code = codes.get(name);
        if (code != null) return code;
        if (name.indexOf('\n') >= 0) throw new IllegalArgumentException("error name " + name + ": one line, please");
        if (codes.size() >= 0xFFFF) throw new IllegalStateException("more than 65535 distinct error names");
        try (OutputStream names = new FileOutputStream(namesFile.toFile(), true)) {
            names.write((name + "\n").getBytes(StandardCharsets.UTF_8));
            names.flush();
        } catch (IOException e) {
            throw new IllegalStateException("cannot append to " + namesFile, e);
        }
        codes.put(name, codes.size() + 1);
        return codes.size();
    }

    long count() {
        return count;
    }

    /** How many sequences have each status now (indexed by UNKNOWN, ACKNOWLEDGED, FAILED, ABORTED), by one
     *  scan of the mapping; answers still arriving may or may not be counted. */
    long[] countByStatus() {
        long[] counts = new long[4];
        for (long i = 0; i < count; i++) {
            byte value = status.getByte(i);
            if (value >= 0 && value < counts.length) counts[value]++;
        }
        return counts;
    }

    /** One .npy file of `count` values of `width` bytes (NPY 1.0, little-endian, C order), mapped in chunks
     *  because one MappedByteBuffer holds less than 2 GiB. */
    /** One mapped .npy column (the delivery consumer's processed history uses it too). */
    static final class Column {
        private static final int CHUNK_SHIFT = 27; // values per chunk: 1 GiB of int64 at most
        private static final long CHUNK_MASK = (1L << CHUNK_SHIFT) - 1;
        private final MappedByteBuffer[] chunks;
        private final int width;

        Column(Path file, String descr, int width, long count) throws IOException {
            this.width = width;
            byte[] header = npyHeader(descr, count);
            try (FileChannel channel = FileChannel.open(file, StandardOpenOption.CREATE,
                    StandardOpenOption.TRUNCATE_EXISTING, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
                channel.write(ByteBuffer.wrap(header), 0);
                chunks = new MappedByteBuffer[(int) ((count + CHUNK_MASK) >>> CHUNK_SHIFT)];
                for (int i = 0; i < chunks.length; i++) {
                    long first = (long) i << CHUNK_SHIFT;
                    long values = Math.min(CHUNK_MASK + 1, count - first);
                    // Mapping past the end grows the file with zeros; the mapping outlives the channel.
                    long position = header.length + first * width;
                    chunks[i] = channel.map(FileChannel.MapMode.READ_WRITE, position, values * width);
                    chunks[i].order(ByteOrder.LITTLE_ENDIAN);
                }
            }
        }

        /** What numpy.lib.format writes for a 1-d array: the dict with spare room for the shape to grow
         *  (21 digits), then spaces and a newline up to a multiple of 64 bytes. */
        static byte[] npyHeader(String descr, long count) {
            String shape = Long.toString(count);
            String dict = "{'descr': '" + descr + "', 'fortran_order': False, 'shape': (" + shape + ",), }"
                    + " ".repeat(Math.max(0, 21 - shape.length()));
            int length = dict.length() + 1; // with the final newline
            int padding = 64 - (6 + 2 + 2 + length) % 64;
            ByteBuffer header = ByteBuffer.allocate(10 + length + padding).order(ByteOrder.LITTLE_ENDIAN);
            header.put((byte) 0x93).put("NUMPY".getBytes(StandardCharsets.US_ASCII)).put((byte) 1).put((byte) 0);
            header.putShort((short) (length + padding));
            header.put((dict + " ".repeat(padding) + "\n").getBytes(StandardCharsets.US_ASCII));
            return header.array();
        }

        /** Every byte 0xFF: -1 in every signed width. */
        void fillOnes() {
            for (MappedByteBuffer chunk : chunks) {
                int i = 0;
                for (; i + 8 <= chunk.capacity(); i += 8) chunk.putLong(i, -1L);
                for (; i < chunk.capacity(); i++) chunk.put(i, (byte) -1);
            }
        }

        private MappedByteBuffer chunk(long index) {
            return chunks[(int) (index >>> CHUNK_SHIFT)];
        }

        private int at(long index) {
            return (int) ((index & CHUNK_MASK) * width);
        }

        byte getByte(long index) {
            return chunk(index).get(at(index));
        }

        void putByte(long index, byte value) {
            chunk(index).put(at(index), value);
        }

        void putShort(long index, short value) {
            chunk(index).putShort(at(index), value);
        }

        void putInt(long index, int value) {
            chunk(index).putInt(at(index), value);
        }

        void putLong(long index, long value) {
            chunk(index).putLong(at(index), value);
        }
    }
}

package kafkabench;

import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.Scanner;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicLong;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.Recorder;

/**
 * One latency metric in microseconds with the range of core/histogram.py (1 us .. 1 h, 3 digits): a total
 * and the current progress window. Any thread may record (the producer's acks arrive on its I/O thread);
 * only the thread that runs the scenario takes windows and totals.
 */
final class LatencyMetric {
    static final long HIGHEST_US = 3_600_000_000L;
    static final int SIGNIFICANT_DIGITS = 3;

    private final Recorder recorder = new Recorder(1, HIGHEST_US, SIGNIFICANT_DIGITS);
    private final Histogram window = newHistogram();
    private final Histogram total = newHistogram();
    private final AtomicLong outOfRange;

    /** outOfRange: the counter shared by all metrics of a run. */
    LatencyMetric(AtomicLong outOfRange) {
        this.outOfRange = outOfRange;
    }

    static Histogram newHistogram() {
        return new Histogram(1, HIGHEST_US, SIGNIFICANT_DIGITS);
    }

    /** Microseconds rounded as core/histogram.py does; a value out of range is counted, never dropped silently. */
    void record(long nanos) {
        long micros = Math.floorDiv(nanos + 500, 1000);
        if (nanos < 0 || micros > HIGHEST_US) {
            outOfRange.incrementAndGet();
        } else {
            recorder.recordValue(micros);
        }
    }

    /** Closes the current window: its values, encoded; they join the total. */
    String takeWindow() {
        closeWindow();
        return encodeWindow();
    }

    /** Closes the current window (its values join the total); encodeWindow() then gives them. */
    void closeWindow() {
        drainIntoWindow();
    }

    String encodeWindow() {
        return encode(window);
    }

    /** Everything recorded so far, encoded. Values not yet in a window join the total without one. */
    String encodeTotal() {
        drainIntoWindow();
        return encode(total);
    }

    private void drainIntoWindow() {
        recorder.getIntervalHistogramInto(window); // resets the window first
        total.add(window);
    }

    /** HdrHistogram V2 compressed, base64: the encoding Python's hdrh decodes. */
    static String encode(Histogram histogram) {
        ByteBuffer buffer = ByteBuffer.allocate(histogram.getNeededByteBufferCapacity());
        int length = histogram.encodeIntoCompressedByteBuffer(buffer);
        return Base64.getEncoder().encodeToString(Arrays.copyOf(buffer.array(), length));
    }

    /** For the interop test fixture: microsecond values in; the values and their Java encoding out. */
    static Map<String, Object> encodeFixture(InputStream in) {
        Histogram histogram = newHistogram();
        List<Long> values = new ArrayList<>();
        Scanner scanner = new Scanner(in, StandardCharsets.US_ASCII);
        while (scanner.hasNextLong()) values.add(scanner.nextLong());
        values.forEach(histogram::recordValue);
        return new TreeMap<>(Map.of("values_us", values, "encoded", encode(histogram))); // stable key order
    }
}

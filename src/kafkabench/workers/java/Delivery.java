package kafkabench;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.errors.TimeoutException;
import kafkabench.KafkabenchWorker.WorkerFailure;

/**
 * The delivery scenario (delivery lab, seed 004), the twin of workers/delivery.py: a producer whose end is
 * part of the experiment. Message i carries the id (producer, i) in its value (core/delivery_ids.py), and
 * every answer goes into a History mapped to files as it is stored, so a process that halts at once loses
 * nothing it had been told: an ack (partition, offset), a failure (its error), or a timeout, which says
 * nothing of the outcome and stays unknown with its error; a message never answered stays unknown.
 *
 * <p>The seed's stopwatch, in `timings`: each of the first `singles` sends alone (sync: send and wait for
 * the answer; async: the send call), the bulk of the rest, the ending (sync and async-close: the flush;
 * async-sleep: the sleep; async-exit and async-return: nothing), and ms per event = all of it / messages sent.
 * A `finish` while it sends ends the sending there (between transactions) and the mode's ending follows.
 * A `progress` (sent and acknowledged so far) every 0.2 s lets the orchestrator fire faults after a message
 * count. After the result the mode decides how the process ends, in close() and exitsWhenDone().
 */
final class Delivery implements KafkabenchWorker.Scenario {
    static final String[] MODES = {"sync", "async-close", "async-exit", "async-return", "async-sleep"};
    static final byte[] MAGIC = "kbd1".getBytes(StandardCharsets.US_ASCII);
    static final int ID_BYTES = MAGIC.length + 2 + 8;
    static final String REFUSED = "SendRefused"; // as the Python worker names a send refused before it left
    private static final long PROGRESS_NS = 200_000_000;
    private static final long NOT_DUE = Long.MIN_VALUE; // a send off the schedule: stamped when it is made
    private static final int PROGRESS_EVERY = 256; // async sends between two looks at the clock

    private final JsonNode task;
    private final String topic, mode;
    private final long count, singles, sleepNs, timeoutNs;
    private final double rate; // the bulk's open-loop schedule, messages/s; -1: as fast as possible
    private final boolean stamp; // each message's intended send time in header kb-sent-ns, for an e2e consumer
    private final long transactionSize; // messages per transaction (transactional.id in the config); 0: none
    private final double abortRatio; // the share of transactions aborted on purpose, spread evenly
    private final int producerId, size;
    private final Path historyDir;
    private final AtomicLong acked = new AtomicLong(); // for progress; the result counts the history
    private final LatencyMetric publish = new LatencyMetric(new AtomicLong()); // per progress window, as Python's
    private long windowIndex, windowStartNs = System.nanoTime(), windowAcked;
    private final Map<String, Object> timings = new LinkedHashMap<>();
    private Map<String, Object> effectiveConfig = Map.of();
    private KafkaProducer<byte[], byte[]> producer;
    private History history;
    private long sent, nextProgressNs;
    private boolean refusalLogged;

    Delivery(JsonNode task) throws WorkerFailure {
        Params params = new Params(task);
        this.task = task;
        topic = task.path("topic").asText();
        mode = params.text("mode", MODES);
        Long counted = params.count("count");
        if (counted == null || counted < 1 || counted > History.MAX_COUNT) {
            throw params.invalid("count", "a count from 1 to " + History.MAX_COUNT);
        }
        count = counted;
        producerId = (int) inRange(params, "producer", params.count("producer"), 0, 0, 0xFFFF);
        historyDir = Path.of(params.text("history_dir"));
        size = (int) inRange(params, "size", params.count("size"), ID_BYTES, ID_BYTES, Integer.MAX_VALUE - 8);
        singles = inRange(params, "singles", params.count("singles"), 8, 0, Long.MAX_VALUE);
        long sleepMs = inRange(params, "sleep_ms", params.count("sleep_ms"), 0, 0, Long.MAX_VALUE / 1_000_000);
        if (mode.equals("async-sleep") != (sleepMs > 0)) {
            throw params.invalid("sleep_ms", "> 0 with mode async-sleep, and only with it");
        }
        sleepNs = sleepMs * 1_000_000;
        rate = params.number("rate_per_s", -1);
        stamp = params.flag("stamp");
        if (rate <= 0 && rate != -1) throw params.invalid("rate_per_s", "a number > 0, or -1 (as fast as possible)");
        timeoutNs = (long) (task.path("timeout_s").asDouble(30) * 1e9);
        transactionSize = inRange(params, "transaction_size", params.count("transaction_size"), 0, 0, History.MAX_COUNT);
        abortRatio = params.number("abort_ratio", 0);
        if (abortRatio < 0 || abortRatio >= 1) throw params.invalid("abort_ratio", "a number from 0 to below 1");
        if (transactionSize > 0 && singles > 0) throw params.invalid("singles", "0 with transactions");
    }

    /** Whether transaction t (from 0) is aborted on purpose: as workers/delivery.py's aborted(), in the same doubles. */
    static boolean aborted(long transaction, double ratio) {
        return Math.floor((transaction + 1) * ratio) > Math.floor(transaction * ratio);
    }

    /** An optional count (fallback when absent) in [min, max]. */
    private static long inRange(Params params, String name, Long value, long fallback, long min, long max)
            throws WorkerFailure {
        if (value == null) return fallback;
        if (value < min || value > max) throw params.invalid(name, "a count from " + min + " to " + max);
        return value;
    }

    @Override
    public boolean run(Inbox inbox) throws Exception {
        setUp();
        KafkabenchWorker.sendReady();
        switch (Startup.Signal.of(inbox.take())) {
            case GONE: return false;
            case FINISH: return true;
            case START: break;
        }
        sendAll(inbox); // a finish from now on ends the sending early (at a transaction's end); the ending stays
        return true;
    }

    private void setUp() throws WorkerFailure, InterruptedException {
        Properties props = ClientConfigs.producer(task);
        effectiveConfig = Map.of("producer", ClientConfigs.effectiveProducer(props));
        producer = new KafkaProducer<>(props);
        if (transactionSize > 0) {
            try {
                producer.initTransactions();
            } catch (RuntimeException e) {
                throw new WorkerFailure("config", "initTransactions failed: " + e);
            }
        }
        Startup.awaitMetadata(producer, topic, timeoutNs);
        try {
            history = History.mapped(historyDir, producerId, count);
        } catch (IOException | RuntimeException e) {
            throw new WorkerFailure("failure", "cannot map the history in " + historyDir + ": " + e);
        }
    }

    /** Every message as the mode says, timed as the seed's stopwatch; the ending that ends the process
     *  (a halt) comes in close(), once the result is out. */
    private void sendAll(Inbox inbox) throws InterruptedException, WorkerFailure {
        long started = System.nanoTime();
        nextProgressNs = started;
        boolean synchronous = mode.equals("sync");
        long timedAlone = Math.min(singles, count);
        for (long sequence = 0; sequence < timedAlone; sequence++) {
            long begun = System.nanoTime();
            send(sequence, synchronous, NOT_DUE);
            timings.put("single_" + (sequence + 1) + "_ms", millis(System.nanoTime() - begun));
        }
        long begun = System.nanoTime();
        int every = synchronous || rate > 0 ? 1 : PROGRESS_EVERY;
        for (long sequence = timedAlone; sequence < count; sequence++) {
            long transaction = transactionSize > 0 ? sequence / transactionSize : -1;
            boolean between = transaction < 0 || sequence % transactionSize == 0;
            if (between && inbox.finishRequested()) {
                endEarly();
                break;
            }
            if (transaction >= 0 && sequence % transactionSize == 0) producer.beginTransaction();
            long dueNs = rate > 0 ? begun + Math.round((sequence - timedAlone) * 1e9 / rate) : NOT_DUE;
            if (rate > 0) awaitTurn(dueNs);
            send(sequence, synchronous, dueNs);
            if (sequence % every == 0) progress(false);
            if (transaction >= 0 && ((sequence + 1) % transactionSize == 0 || sequence + 1 == count)) {
                endTransaction(transaction * transactionSize, sequence + 1, !aborted(transaction, abortRatio));
            }
        }
        timings.put("bulk_ms", millis(System.nanoTime() - begun));
        begun = System.nanoTime();
        if (mode.equals("sync") || mode.equals("async-close")) {
            flushReporting(); // the close after it (in close()) only releases the client
        } else if (mode.equals("async-sleep")) {
            sleepReporting();
        }
        long ended = System.nanoTime();
        timings.put("ending_ms", millis(ended - begun));
        timings.put("ms_per_event", millis(ended - started) / Math.max(sent, 1));
        progress(true);
    }

    /** Told to finish before the count: the history counts what was handed to the client. */
    private void endEarly() throws WorkerFailure {
        try {
            history.endAt(sent);
        } catch (IOException e) {
            throw new WorkerFailure("failure", "cannot write the history's meta in " + historyDir + ": " + e);
        }
    }

    /** Commit (or abort) and record what became of the transaction's messages: a commit that timed out is tried
     *  again within timeout_s and else leaves them unknown; one the broker refused is aborted; a fatal error
     *  (fenced, out of order, not authorized) leaves them unknown and ends the run. */
    private void endTransaction(long first, long end, boolean commit) throws WorkerFailure {
        long deadline = System.nanoTime() + timeoutNs;
        while (true) {
            try {
                if (commit) {
                    producer.commitTransaction();
                } else {
                    producer.flush(); // every message written and answered first: an abort then marks them all
                    producer.abortTransaction();
                }
                if (!commit) history.recordAborted(first, end);
                return;
            } catch (TimeoutException e) {
                if (System.nanoTime() - deadline < 0) continue;
                for (long sequence = first; sequence < end; sequence++) history.recordUnknown(sequence, errorName(e));
                return;
            } catch (org.apache.kafka.common.errors.ProducerFencedException
                     | org.apache.kafka.common.errors.OutOfOrderSequenceException
                     | org.apache.kafka.common.errors.AuthorizationException
                     | org.apache.kafka.common.errors.UnsupportedVersionException e) {
                for (long sequence = first; sequence < end; sequence++) history.recordUnknown(sequence, errorName(e));
                throw new WorkerFailure("failure", "the transaction of messages " + first + ".." + (end - 1) + ": " + e);
            } catch (org.apache.kafka.common.KafkaException e) {
                producer.abortTransaction();
                history.recordAborted(first, end);
                return;
            }
        }
    }

    /** The open-loop schedule: the bulk's message i is due at its start + i / rate, whatever happened before. */
    private void awaitTurn(long dueNs) {
        for (long now = System.nanoTime(); now - dueNs < 0; now = System.nanoTime()) {
            progress(false);
            LockSupport.parkNanos(Math.min(dueNs - now, PROGRESS_NS));
        }
    }

    private static double millis(long nanos) {
        return nanos / 1e6;
    }

    /** Sends one message (with `stamp`, `dueNs` its kb-sent-ns header: its intended send time, NOT_DUE: now); sync
     *  waits for its answer up to timeout_s, and without one leaves it unknown. */
    private void send(long sequence, boolean synchronous, long dueNs) throws InterruptedException {
        byte[] value = encodeId(producerId, sequence, size);
        sent = sequence + 1;
        Future<RecordMetadata> answer;
        ProducerRecord<byte[], byte[]> record = new ProducerRecord<>(topic, value);
        if (stamp) {
            byte[] stampNs = new byte[8];
            Produce.putBigEndian(dueNs == NOT_DUE ? System.nanoTime() : dueNs, stampNs);
            record.headers().add(Produce.STAMP_HEADER, stampNs);
        }
        long sentNs = System.nanoTime();
        try {
            answer = producer.send(record,
                    (metadata, exception) -> answered(sequence, sentNs, metadata, exception));
        } catch (RuntimeException e) { // refused before it left (per-record failures reach the callback)
            if (!refusalLogged) System.err.println("send of sequence " + sequence + " refused: " + e);
            refusalLogged = true;
            history.recordFailure(sequence, REFUSED);
            return;
        }
        if (!synchronous) return;
        try {
            answer.get(timeoutNs, TimeUnit.NANOSECONDS); // returns after the callback has stored the answer
        } catch (ExecutionException e) {
            // a failure, already in the history by the callback
        } catch (java.util.concurrent.TimeoutException e) {
            // no answer in time: unknown, and on to the next
        }
    }

    /** The producer's callback, on its I/O thread (on this one for a record failed at once). */
    private void answered(long sequence, long sentNs, RecordMetadata metadata, Exception exception) {
        if (exception == null) {
            publish.record(System.nanoTime() - sentNs); // from the send call to this callback
            history.recordAck(sequence, metadata.partition(), metadata.offset()); // offset -1 with acks=0
            acked.incrementAndGet();
        } else if (exception instanceof TimeoutException) { // the record may be written or not
            history.recordUnknown(sequence, errorName(exception));
        } else {
            history.recordFailure(sequence, errorName(exception));
        }
    }

    private static String errorName(Exception exception) {
        String name = exception.getClass().getSimpleName();
        return name.isEmpty() ? exception.getClass().getName() : name;
    }

    /** The id of core/delivery_ids.py: MAGIC, producer (uint16), sequence (uint64), big-endian, zero-padded. */
    static byte[] encodeId(int producer, long sequence, int size) {
        ByteBuffer value = ByteBuffer.allocate(size); // big-endian and zeroed
        value.put(MAGIC).putShort((short) producer).putLong(sequence);
        return value.array();
    }

    /** flush() in a helper thread, so progress keeps coming while the last answers arrive; bounded by the
     *  task's timeout_s, after which the unanswered stay unknown, as in the Python worker. */
    private void flushReporting() throws InterruptedException {
        Thread flusher = new Thread(producer::flush, "kafkabench-flush");
        flusher.setDaemon(true);
        flusher.start();
        long deadline = System.nanoTime() + timeoutNs;
        for (long now = System.nanoTime(); flusher.isAlive() && now - deadline < 0; now = System.nanoTime()) {
            progress(false);
            flusher.join(Math.max(1, Math.min(nextProgressNs - now, deadline - now) / 1_000_000));
        }
        if (flusher.isAlive()) {
            System.err.println("flush did not finish within timeout_s (" + KafkabenchWorker.seconds(timeoutNs / 1e9)
                    + " s); the unanswered messages stay unknown");
        }
    }

    /** async-sleep: sleep_ms, reporting meanwhile; answers arriving now are stored by the I/O thread. */
    private void sleepReporting() throws InterruptedException {
        long deadline = System.nanoTime() + sleepNs;
        for (long now = System.nanoTime(); now - deadline < 0; now = System.nanoTime()) {
            progress(false);
            TimeUnit.NANOSECONDS.sleep(Math.min(nextProgressNs - now, deadline - now));
        }
    }

    /** A `progress` when 0.2 s have passed since the last one (or at once with force). */
    private void progress(boolean force) {
        long now = System.nanoTime();
        if (!force && now - nextProgressNs < 0) return;
        nextProgressNs = now + PROGRESS_NS;
        Map<String, Object> progress = new LinkedHashMap<>();
        progress.put("type", "progress");
        progress.put("done", sent);
        long ackedNow = acked.get();
        progress.put("acked", ackedNow);
        Map<String, Object> window = new LinkedHashMap<>(); // the acknowledged and their latencies since the last
        window.put("index", windowIndex++);
        window.put("start_ns", windowStartNs);
        window.put("end_ns", now);
        window.put("records", ackedNow - windowAcked);
        window.put("payload_bytes", (ackedNow - windowAcked) * size);
        window.put("histograms", Map.of("publish", publish.takeWindow()));
        progress.put("window", window);
        windowStartNs = now;
        windowAcked = ackedNow;
        KafkabenchWorker.send(progress);
    }

    @Override
    public Map<String, Object> outcome() {
        Map<String, Object> outcome = new LinkedHashMap<>();
        outcome.put("client_version", KafkabenchWorker.VERSION);
        Map<String, Object> counters = new LinkedHashMap<>();
        if (history != null) { // as the history has them now; `sent` is its size, as in the Python worker
            long[] byStatus = history.countByStatus();
            counters.put("sent", history.count());
            counters.put("acked", byStatus[History.ACKNOWLEDGED]);
            counters.put("failed", byStatus[History.FAILED]);
            counters.put("unknown", byStatus[History.UNKNOWN]);
            if (transactionSize > 0) counters.put("aborted", byStatus[History.ABORTED]);
        }
        outcome.put("counters", counters);
        outcome.put("timings", new LinkedHashMap<>(timings));
        outcome.put("effective_config", effectiveConfig);
        return outcome;
    }

    /** After the result, the mode's end: async-exit and async-sleep halt at once, with no close and no
     *  flush (the seed's System.exit); async-return leaves the client as it is; the others close it. */
    @Override
    public void close() {
        switch (mode) {
            case "async-exit", "async-sleep" -> Runtime.getRuntime().halt(0);
            case "async-return" -> { }
            default -> {
                try {
                    producer.close(Duration.ofSeconds(5));
                } catch (RuntimeException e) {
                    System.err.println("closing the producer failed: " + e);
                }
            }
        }
    }

    /** async-return: main returns instead of exiting, and whether the JVM then ends is the finding. */
    @Override
    public boolean exitsWhenDone() {
        return !mode.equals("async-return");
    }
}

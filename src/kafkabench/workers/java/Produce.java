package kafkabench;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.Metric;
import org.apache.kafka.common.MetricName;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeader;
import kafkabench.KafkabenchWorker.WorkerFailure;

/**
 * The produce scenario (throughput lab): an open-loop producer. Message i is due at start + i / rate and
 * the schedule never shifts after a stall, so `publish_delay` (due -> send call) shows what a closed loop
 * would hide (coordinated omission); `publish_latency` runs from the send call to the ack callback.
 * Rate -1 sends as fast as the client accepts, and the send call is the due time.
 */
final class Produce implements KafkabenchWorker.Scenario {
    static final String STAMP_HEADER = "kb-sent-ns";

    private final JsonNode task;
    static final long SETUP_METADATA_NS = 15_000_000_000L;
    static final int KEY_POOL = 10_000; // params.keys': "key0000000" ... "key0009999", as the Python worker's

    private final String[] topics; // message i goes to topics[i % n]
    private final byte[][] keys; // null: no keys; else the pool, used in turn or at random
    private final boolean randomKeys;
    private final Long count;
    private final long warmup;
    private final long durationNs, intervalNs, timeoutNs;
    private final double rate;
    private final boolean stamp;
    private final int[] partitions; // null: the partitioner decides; else message i goes to partitions[i % n]
    private final byte[][] payloads;
    private final AtomicLong outOfRange = new AtomicLong();
    private final LatencyMetric publishLatency = new LatencyMetric(outOfRange);
    private final LatencyMetric publishDelay = new LatencyMetric(outOfRange);
    private final SendOutcomes outcomes = new SendOutcomes();
    private final Thread mainThread = Thread.currentThread();
    private Map<String, Object> effectiveConfig = Map.of();
    private KafkaProducer<byte[], byte[]> producer;
    private long flushBoundNs, warmupWireBytes;
    private Windows windows;
    private long sent, startNs, cpuStartNs;
    private boolean started;

    Produce(JsonNode task) throws WorkerFailure {
        Params params = new Params(task);
        this.task = task;
        topics = params.names("topics", task.path("topic").asText());
        String keying = params.optionalText("keys") == null ? "none"
                : params.text("keys", "none", "round_robin", "random");
        keys = keying.equals("none") ? null : keyPool();
        randomKeys = keying.equals("random");
        count = params.count("count");
        Long warmupCount = params.count("warmup");
        warmup = warmupCount == null ? 0 : warmupCount;
        durationNs = params.nanos("duration_s");
        if (count == null && durationNs == Params.NEVER) throw params.invalid("count", "set when duration_s is not");
        rate = params.number("rate_per_s", -1);
        if (rate <= 0 && rate != -1) throw params.invalid("rate_per_s", "a number > 0, or -1 (as fast as possible)");
        intervalNs = (long) (params.number("interval_s", 1.0) * 1e9);
        if (intervalNs <= 0) throw params.invalid("interval_s", "a number of seconds > 0");
        stamp = params.flag("stamp");
        partitions = params.partitions("partitions");
        timeoutNs = (long) (task.path("timeout_s").asDouble(30) * 1e9);
        payloads = Payloads.read(task);
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
        inbox.onArrival(() -> LockSupport.unpark(mainThread)); // a finish ends a wait for the next due time
        startNs = System.nanoTime();
        cpuStartNs = Resources.processCpuNanos();
        started = true;
        outcomes.startAt(startNs);
        windows = new Windows(startNs, intervalNs);
        sendAll(inbox);
        flushReporting();
        emitWindow(System.nanoTime());
        return true;
    }

    private void setUp() throws WorkerFailure, InterruptedException {
        Properties props = ClientConfigs.producer(task);
        ProducerConfig config = new ProducerConfig(props);
        effectiveConfig = Map.of("producer", ClientConfigs.render(config.values()));
        // Every record expires by delivery.timeout.ms, so a flush that takes longer has hung.
        flushBoundNs = config.getInt(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG) * 1_000_000L + timeoutNs;
        producer = new KafkaProducer<>(props);
        // set-up, before `ready`: timeout_s bounds the run; a loaded machine may take longer to its first metadata
        long metadataNs = Math.max(timeoutNs, SETUP_METADATA_NS);
        for (String name : topics) Startup.awaitMetadata(producer, name, metadataNs);
        warmUp();
        warmupWireBytes = wireBytes();
    }

    /** `warmup` records sent and acknowledged before `ready`, measured nowhere: the JVM compiles the send
     *  path meanwhile, so the measured records do not pay for the JIT. */
    private void warmUp() throws WorkerFailure, InterruptedException {
        if (warmup == 0) return;
        CountDownLatch answered = new CountDownLatch((int) warmup);
        AtomicReference<Exception> failure = new AtomicReference<>();
        for (long i = 0; i < warmup; i++) {
            try {
                producer.send(new ProducerRecord<>(topics[0], payloads[(int) (i % payloads.length)]), (metadata, exception) -> {
                    if (exception != null) failure.compareAndSet(null, exception);
                    answered.countDown();
                });
            } catch (RuntimeException e) {
                throw new WorkerFailure("failure", "warm-up send " + (i + 1) + " failed: " + e);
            }
        }
        if (!answered.await(flushBoundNs, TimeUnit.NANOSECONDS)) {
            throw new WorkerFailure("timeout", "warm-up: " + answered.getCount() + " of " + warmup
                    + " records unanswered within delivery.timeout.ms + timeout_s");
        }
        if (failure.get() != null) {
            WorkerFailure cause = KafkabenchWorker.asFailure(failure.get());
            throw new WorkerFailure(cause.kind, "warm-up: " + cause.getMessage());
        }
    }

    private void sendAll(Inbox inbox) throws WorkerFailure {
        for (long i = 0; count == null || i < count; i++) {
            long due = rate > 0 ? startNs + Math.round(i * 1e9 / rate) : 0;
            if (!awaitTurn(inbox, due)) return;
            long tSend = sendOne(i, due);
            if (rate > 0) publishDelay.record(tSend - due);
        }
    }

    /** Waits until `due` (at once for rate -1), reporting windows meanwhile; false when the run must stop first. */
    private boolean awaitTurn(Inbox inbox, long due) throws WorkerFailure {
        while (true) {
            long now = System.nanoTime();
            if (inbox.finishRequested() || now - startNs >= durationNs) return false;
            if (windows.due(now)) emitWindow(now);
            outcomes.checkProgress(now, timeoutNs);
            long ahead = due - now;
            if (rate < 0 || ahead <= 0) return true;
            // Parked even a few microseconds ahead: the wake-up comes some 50-100 us late (the kernel's timer
            // slack, as the Python worker's naps) and shows as publish_delay. Spinning instead took a core from
            // the broker and the consumers on a small machine, which showed as their latency.
            LockSupport.parkNanos(Math.min(ahead, Math.min(windows.nanosUntilDue(now), durationNs - (now - startNs))));
        }
    }

    /** Sends message i; returns the send time (tSend), read just before the send call. */
    private long sendOne(long i, long due) throws WorkerFailure {
        byte[] value = payloads[(int) (i % payloads.length)];
        byte[] sentNs = stamp ? new byte[8] : null; // filled in once the send time is known (rate -1)
        List<Header> headers = stamp ? List.of(new RecordHeader(STAMP_HEADER, sentNs)) : null;
        Integer partition = partitions == null ? null : partitions[(int) (i % partitions.length)];
        byte[] key = keys == null ? null
                : keys[randomKeys ? ThreadLocalRandom.current().nextInt(KEY_POOL) : (int) (i % KEY_POOL)];
        String topic = topics[(int) (i % topics.length)];
        ProducerRecord<byte[], byte[]> record = new ProducerRecord<>(topic, partition, null, key, value, headers);
        long tSend = System.nanoTime();
        if (stamp) putBigEndian(rate > 0 ? due : tSend, sentNs);
        sent++;
        try {
            producer.send(record, (metadata, exception) -> outcomes.completed(tSend, value.length, exception, publishLatency));
        } catch (RuntimeException e) { // not a per-record failure (those reach the callback): the producer is unusable
            throw new WorkerFailure("failure", "send of message " + sent + " failed: " + e);
        }
        return tSend;
    }

    static byte[][] keyPool() {
        byte[][] pool = new byte[KEY_POOL][];
        for (int i = 0; i < KEY_POOL; i++) pool[i] = String.format("key%07d", i).getBytes(StandardCharsets.US_ASCII);
        return pool;
    }

    static void putBigEndian(long value, byte[] bytes) {
        for (int i = 7; i >= 0; i--, value >>>= 8) bytes[i] = (byte) value;
    }

    /** flush() in a helper thread, so that windows keep coming while it waits for the last acks. */
    private void flushReporting() throws WorkerFailure, InterruptedException {
        Thread flusher = new Thread(producer::flush, "kafkabench-flush");
        flusher.setDaemon(true);
        flusher.start();
        long deadline = System.nanoTime() + flushBoundNs;
        for (long now = System.nanoTime(); flusher.isAlive(); now = System.nanoTime()) {
            if (now - deadline >= 0) {
                throw new WorkerFailure("timeout", "flush did not finish within delivery.timeout.ms + timeout_s ("
                        + KafkabenchWorker.seconds(flushBoundNs / 1e9) + " s)");
            }
            if (windows.due(now)) emitWindow(now);
            outcomes.checkProgress(now, timeoutNs);
            flusher.join(Math.max(1, Math.min(windows.nanosUntilDue(now), deadline - now) / 1_000_000));
        }
    }

    private void emitWindow(long now) {
        long[] counts = new long[2];
        outcomes.counted(() -> {
            publishLatency.closeWindow();
            counts[0] = outcomes.acked();
            counts[1] = outcomes.payloadBytes();
        });
        long acked = counts[0];
        Map<String, String> histograms = new LinkedHashMap<>();
        histograms.put("publish_latency", publishLatency.encodeWindow());
        histograms.put("publish_delay", publishDelay.takeWindow());
        Map<String, Object> window = windows.close(now, acked, counts[1], outcomes.errors(), histograms);
        KafkabenchWorker.send(Windows.progress(acked, window));
    }

    @Override
    public Map<String, Object> outcome() {
        Map<String, Object> outcome = new LinkedHashMap<>();
        outcome.put("client_version", KafkabenchWorker.VERSION);
        Map<String, String> histograms = new LinkedHashMap<>();
        histograms.put("publish_latency", publishLatency.encodeTotal());
        histograms.put("publish_delay", publishDelay.encodeTotal());
        outcome.put("histograms", histograms);
        Map<String, Object> counters = new LinkedHashMap<>();
        counters.put("sent", sent);
        outcomes.addCounters(counters);
        counters.put("out_of_range", outOfRange.get());
        counters.put("wire_bytes", wireBytes() - warmupWireBytes);
        outcome.put("counters", counters);
        double cpuS = started ? (Resources.processCpuNanos() - cpuStartNs) / 1e9 : 0.0;
        outcome.put("resources", Map.of("cpu_s", cpuS, "max_rss_mb", Resources.peakRssMb()));
        outcome.put("effective_config", effectiveConfig);
        Long endNs = outcomes.lastAckNs();
        // From the start signal, where message 0 is due, as the Python worker counts: a first send held back by a
        // loaded machine is publish_delay, not a shorter run (that would put the rate above its schedule).
        outcome.put("start_ns", sent > 0 ? startNs : null);
        outcome.put("end_ns", endNs);
        outcome.put("duration_s", sent > 0 && endNs != null ? (endNs - startNs) / 1e9 : 0.0);
        return outcome;
    }

    /** Bytes the producer wrote to the network, from its own metric (0 before it exists). */
    private long wireBytes() {
        if (producer == null) return 0;
        for (Map.Entry<MetricName, ? extends Metric> metric : producer.metrics().entrySet()) {
            MetricName name = metric.getKey();
            if (name.name().equals("outgoing-byte-total") && name.group().equals("producer-metrics")) {
                return ((Number) metric.getValue().metricValue()).longValue();
            }
        }
        return 0;
    }

    @Override
    public void close() {
        try {
            producer.close(Duration.ofSeconds(5));
        } catch (RuntimeException e) {
            System.err.println("closing the producer failed: " + e);
        }
    }
}

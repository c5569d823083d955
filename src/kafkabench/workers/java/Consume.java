package kafkabench;

import com.fasterxml.jackson.databind.JsonNode;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.CloseOptions;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.WakeupException;
import org.apache.kafka.common.header.Header;
import kafkabench.KafkabenchWorker.WorkerFailure;

/**
 * The consume scenario (throughput lab): a group member that is `ready` once its partitions are assigned
 * and positioned (so `latest` means "after ready", before any producer starts), then counts what arrives.
 * A record stamped by a producer on this host (`kb-sent-ns`, monotonic ns) gives its `e2e` latency.
 */
final class Consume implements KafkabenchWorker.Scenario {
    private static final long POLL_NS = 100_000_000;

    private final JsonNode task;
    private final String group, from;
    private final String[] topics; // subscribed in the group; `partitions` are of the one topic
    private final Long count;
    private final Map<Integer, Long> stopOffsets;
    private final int[] partitions; // null: the group's share of the topic; else these, assigned without the group
    private final long durationNs, intervalNs, idleNs, timeoutNs;
    private final boolean check;
    private final byte[][] expectedSha256s;
    private final MessageDigest sha256 = Payloads.newSha256();
    private final AtomicLong outOfRange = new AtomicLong();
    private final LatencyMetric e2e = new LatencyMetric(outOfRange);
    // OpenMessaging Benchmark's e2e: the wall clock minus the record's timestamp, whole ms, only samples above 0
    private final LatencyMetric recordTimeE2e = new LatencyMetric(outOfRange);
    private boolean recordTime;
    private Map<String, Object> effectiveConfig = Map.of();
    private KafkaConsumer<byte[], byte[]> consumer;
    private Inbox inbox;
    private Windows windows;
    private long received, payloadBytes, unstamped, errors;
    private long subscribedNs, startNs, cpuStartNs, firstNs, lastNs;
    private Double rebalanceS, idleStopS;
    private boolean started;

    Consume(JsonNode task) throws WorkerFailure {
        Params params = new Params(task);
        this.task = task;
        topics = params.names("topics", task.path("topic").asText());
        group = params.text("group");
        from = params.text("from", "earliest", "latest");
        count = params.count("count");
        stopOffsets = params.offsets("stop_offsets");
        partitions = params.partitions("partitions");
        durationNs = params.nanos("duration_s");
        idleNs = params.nanos("idle_timeout_s");
        intervalNs = (long) (params.number("interval_s", 1.0) * 1e9);
        if (intervalNs <= 0) throw params.invalid("interval_s", "a number of seconds > 0");
        check = params.flag("check");
        recordTime = params.flag("record_time_e2e");
        timeoutNs = (long) (task.path("timeout_s").asDouble(30) * 1e9);
        String[] declared = Payloads.sha256s(task);
        if (check && declared.length == 0) throw params.invalid("check", "false when the task has no payload_sha256s");
        expectedSha256s = new byte[declared.length][];
        for (int i = 0; i < declared.length; i++) expectedSha256s[i] = HexFormat.of().parseHex(declared[i]);
    }

    /** Partitions stay paused until `start`: polling then keeps the membership alive without fetching. */
    private final class PauseUntilStart implements ConsumerRebalanceListener {
        @Override
        public void onPartitionsAssigned(Collection<TopicPartition> partitions) {
            if (!started) consumer.pause(partitions);
            if (rebalanceS == null) rebalanceS = (System.nanoTime() - subscribedNs) / 1e9;
        }

        @Override
        public void onPartitionsRevoked(Collection<TopicPartition> partitions) {
        }
    }

    @Override
    public boolean run(Inbox inbox) throws Exception {
        this.inbox = inbox;
        setUp();
        KafkabenchWorker.sendReady();
        inbox.onArrival(consumer::wakeup); // a start or finish ends the poll() under way
        switch (Startup.Signal.of(awaitMessage(inbox))) {
            case GONE: return false;
            case FINISH: return true;
            case START: break;
        }
        startNs = System.nanoTime();
        cpuStartNs = Resources.processCpuNanos();
        started = true;
        consumer.resume(consumer.assignment());
        windows = new Windows(startNs, intervalNs);
        receive(inbox);
        emitWindow(System.nanoTime());
        return true;
    }

    private void setUp() throws WorkerFailure {
        Properties props = ClientConfigs.consumer(task);
        props.put("group.id", group);
        props.putIfAbsent("auto.offset.reset", from);
        effectiveConfig = Map.of("consumer", ClientConfigs.effectiveConsumer(props));
        consumer = new KafkaConsumer<>(props);
        long deadline = System.nanoTime() + timeoutNs;
        String within = " within " + KafkabenchWorker.seconds(timeoutNs / 1e9) + " s";
        for (String name : topics) {
            if (consumer.partitionsFor(name, Duration.ofNanos(Math.max(1, deadline - System.nanoTime()))).isEmpty()) {
                throw new WorkerFailure("failure", "topic " + name + " has no partitions (does it exist?)");
            }
        }
        subscribedNs = System.nanoTime();
        if (partitions != null) {
            List<TopicPartition> assigned = new ArrayList<>();
            for (int partition : partitions) assigned.add(new TopicPartition(topics[0], partition));
            consumer.assign(assigned);
            new PauseUntilStart().onPartitionsAssigned(assigned);
        } else {
            consumer.subscribe(List.of(topics), new PauseUntilStart());
        }
        for (long now = subscribedNs; rebalanceS == null; now = System.nanoTime()) {
            if (now - deadline >= 0) {
                throw new WorkerFailure("timeout", "no partitions of " + String.join(", ", topics)
                        + " assigned to group " + group + within);
            }
            pollPaused(Math.min(POLL_NS, deadline - now));
        }
        resolvePositions(Duration.ofNanos(Math.max(0, deadline - System.nanoTime())));
    }

    /** Resolves auto.offset.reset now: `latest` must mean the end before any producer starts. */
    private void resolvePositions(Duration timeout) {
        for (TopicPartition partition : consumer.assignment()) consumer.position(partition, timeout);
    }

    /**
     * The next message from the orchestrator, polling (paused) while it has not come, so that other
     * members can join the group meanwhile; a partition this rebalance brings is positioned at once too.
     */
    private JsonNode awaitMessage(Inbox inbox) {
        for (JsonNode message = inbox.poll(); ; message = inbox.poll()) {
            if (message != null) return message;
            pollPaused(POLL_NS);
            try {
                resolvePositions(Duration.ofNanos(timeoutNs));
            } catch (WakeupException e) {
                // a message arrived; a position still open is resolved by the first poll after start
            }
        }
    }

    private void pollPaused(long nanos) {
        try {
            if (!consumer.poll(Duration.ofNanos(nanos)).isEmpty()) {
                throw new IllegalStateException("poll() returned records of paused partitions");
            }
        } catch (WakeupException e) {
            // a message arrived; the caller looks at it
        }
    }

    private void receive(Inbox inbox) throws WorkerFailure {
        for (long now = startNs; ; now = System.nanoTime()) {
            long elapsed = now - startNs, idle = now - (received > 0 ? lastNs : startNs);
            if (inbox.finishRequested() || (count != null && received >= count) || elapsed >= durationNs) return;
            if (idle >= idleNs) {
                idleStopS = idleNs / 1e9;
                return;
            }
            if (windows.due(now)) emitWindow(now);
            long wait = Math.min(Math.min(POLL_NS, windows.nanosUntilDue(now)), Math.min(durationNs - elapsed, idleNs - idle));
            try {
                handle(consumer.poll(Duration.ofNanos(wait)));
            } catch (WakeupException e) {
                // a finish arrived; the loop's condition sees it
            }
        }
    }

    private void handle(ConsumerRecords<byte[], byte[]> records) throws WorkerFailure {
        int taken = 0;
        for (ConsumerRecord<byte[], byte[]> record : records) {
            if (count != null && received >= count) break;
            if (pastStop(record)) continue;
            // A clock read per record, not per batch: cheap, and the batch's later records are stamped no earlier.
            long now = System.nanoTime();
            if (received == 0) firstNs = now;
            lastNs = now;
            received++;
            payloadBytes += record.value() == null ? 0 : record.value().length;
            Header sentNs = record.headers().lastHeader(Produce.STAMP_HEADER);
            if (sentNs != null && sentNs.value() != null && sentNs.value().length == 8) {
                e2e.record(now - longFrom(sentNs.value()));
            } else {
                unstamped++;
            }
            if (recordTime) {
                long waitedMs = System.currentTimeMillis() - record.timestamp();
                if (waitedMs > 0) recordTimeE2e.record(waitedMs * 1_000_000L);
            }
            taken++;
        }
        // After the clock reads of the whole batch, so hashing delays none of them.
        if (check) verify(records, taken);
    }

    private boolean pastStop(ConsumerRecord<byte[], byte[]> record) {
        if (stopOffsets == null) return false;
        Long stop = stopOffsets.get(record.partition());
        return stop != null && record.offset() >= stop;
    }

    static long longFrom(byte[] bigEndian) {
        long value = 0;
        for (byte b : bigEndian) value = (value << 8) | (b & 0xff);
        return value;
    }

    private void verify(ConsumerRecords<byte[], byte[]> records, int taken) throws WorkerFailure {
        int i = 0;
        for (ConsumerRecord<byte[], byte[]> record : records) {
            if (pastStop(record)) continue;
            if (i++ == taken) return;
            byte[] digest = sha256.digest(record.value() == null ? new byte[0] : record.value());
            boolean known = false;
            for (byte[] expected : expectedSha256s) known |= MessageDigest.isEqual(digest, expected);
            if (!known) {
                throw new WorkerFailure("integrity", String.format("record at %s-%d@%d matches none of the %d payloads",
                        record.topic(), record.partition(), record.offset(), expectedSha256s.length));
            }
        }
    }

    private void emitWindow(long now) {
        Map<String, Object> window = windows.close(now, received, payloadBytes, errors, recordTime
                ? Map.of("e2e", e2e.takeWindow(), "e2e_record_time", recordTimeE2e.takeWindow())
                : Map.of("e2e", e2e.takeWindow()));
        KafkabenchWorker.send(Windows.progress(received, window));
    }

    @Override
    public Map<String, Object> outcome() {
        Map<String, Object> outcome = new LinkedHashMap<>();
        outcome.put("client_version", KafkabenchWorker.VERSION);
        outcome.put("histograms", recordTime
                ? Map.of("e2e", e2e.encodeTotal(), "e2e_record_time", recordTimeE2e.encodeTotal())
                : Map.of("e2e", e2e.encodeTotal()));
        Map<String, Object> counters = new LinkedHashMap<>();
        counters.put("received", received);
        counters.put("payload_bytes", payloadBytes);
        counters.put("unstamped", unstamped);
        counters.put("errors", errors);
        counters.put("out_of_range", outOfRange.get());
        outcome.put("counters", counters);
        double cpuS = started ? (Resources.processCpuNanos() - cpuStartNs) / 1e9 : 0.0;
        outcome.put("resources", Map.of("cpu_s", cpuS, "max_rss_mb", Resources.peakRssMb()));
        outcome.put("effective_config", effectiveConfig);
        Map<String, Object> timings = new LinkedHashMap<>();
        if (rebalanceS != null) timings.put("rebalance_s", rebalanceS);
        if (received > 0) timings.put("first_record_s", (firstNs - startNs) / 1e9);
        if (idleStopS != null) timings.put("idle_stop_s", idleStopS);
        outcome.put("timings", timings);
        // From the start signal, as the Python worker does: a run that got everything in one fetch still took time.
        outcome.put("start_ns", startNs > 0 ? startNs : null);
        outcome.put("end_ns", received > 0 ? lastNs : null);
        outcome.put("duration_s", received > 0 ? (lastNs - startNs) / 1e9 : 0.0);
        return outcome;
    }

    @Override
    public void close() {
        inbox.onArrival(() -> { });
        try {
            // A finish may have left a wakeup pending; spent here it cannot cut the close short.
            consumer.pause(consumer.assignment());
            pollPaused(0);
            consumer.close(CloseOptions.timeout(Duration.ofSeconds(5)));
        } catch (RuntimeException e) {
            System.err.println("closing the consumer failed: " + e);
        }
    }
}

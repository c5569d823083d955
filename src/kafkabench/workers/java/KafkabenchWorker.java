package kafkabench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.*;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.HdrHistogram.Histogram;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.consumer.*;
import org.apache.kafka.clients.producer.*;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.common.errors.TimeoutException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.utils.AppInfoParser;
import org.apache.kafka.storage.internals.log.LogConfig;

/**
 * The official Java client's worker: runs the ping-pong loop natively and speaks kafkabench's JSON-lines
 * protocol (kafkabench/core/protocol.py) on stdin/stdout. Stdout carries protocol messages only.
 */
public final class KafkabenchWorker {
    // First in the class: logging defaults to stdout and starts with the first Kafka class loaded (VERSION
    // below), so stdout is handed over to stderr before that and kept for the protocol alone.
    static final PrintStream PROTOCOL_OUT = System.out;

    static {
        System.setOut(System.err);
    }

    static final long HIGHEST_US = 3_600_000_000L; // the range of core/histogram.py: 1 us .. 1 h, 3 digits
    static final ObjectMapper JSON = new ObjectMapper();
    static final String VERSION = AppInfoParser.getVersion();

    private final Map<String, Histogram> histograms = new LinkedHashMap<>();
    private Map<String, Object> effectiveConfig = Map.of();
    private KafkaProducer<byte[], byte[]> producer;
    private KafkaConsumer<byte[], byte[]> consumer;
    private TopicPartition partition;
    private byte[] payload;
    private String expectedSha256;
    private String timeoutText; // as in "no value for message 17 within 30 s"
    private long timeoutNs;
    private long sent, acked, received, errors, outOfRange, measured, cpuNs, measuredWallNs;

    /** A failure worth one `error` message; kind is failure | integrity | config | timeout. */
    static final class WorkerFailure extends Exception {
        final String kind;

        WorkerFailure(String kind, String message) {
            super(message);
            this.kind = kind;
        }
    }

    /** Stamps the ack in the producer's I/O thread; the latch publishes the stamp to the waiting thread. */
    static final class AckStamp implements Callback {
        final CountDownLatch done = new CountDownLatch(1);
        volatile long nanos;
        volatile Exception error;

        @Override
        public void onCompletion(RecordMetadata metadata, Exception exception) {
            nanos = System.nanoTime();
            error = exception;
            done.countDown();
        }
    }

    KafkabenchWorker() {
        for (String metric : List.of("cold", "e2e", "produce", "consume")) {
            histograms.put(metric, new Histogram(1, HIGHEST_US, 3));
        }
    }

    public static void main(String[] args) throws Exception {
        if (Arrays.asList(args).contains("--describe")) {
            PROTOCOL_OUT.println(JSON.writeValueAsString(describe()));
        } else if (Arrays.asList(args).contains("--encode-fixture")) {
            PROTOCOL_OUT.println(JSON.writeValueAsString(encodeFixture()));
        } else {
            var in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
            System.exit(new KafkabenchWorker().serve(in));
        }
    }

    /** The protocol loop; returns the exit code. */
    int serve(BufferedReader in) {
        try {
            JsonNode task = read(in);
            if (task == null) return 0;
            setUp(task);
            send(Map.of("type", "ready", "client_version", VERSION));
            for (JsonNode message = read(in); message != null; message = read(in)) {
                String type = message.path("type").asText();
                if (type.equals("round")) {
                    runRound(message.path("count").asLong());
                    send(Map.of("type", "progress", "done", measured));
                } else if (type.equals("finish")) {
                    Map<String, Object> result = outcome();
                    result.put("type", "result");
                    send(result);
                    closeClients();
                    return 0;
                } else {
                    throw new WorkerFailure("config", "unexpected message type '" + type + "'");
                }
            }
            System.err.println("stdin closed before finish; exiting");
            return 0;
        } catch (Exception e) {
            WorkerFailure failure = asFailure(e);
            errors++;
            send(Map.of("type", "error", "message", failure.getMessage(), "kind", failure.kind, "partial", outcome()));
            return 1;
        }
    }

    /** After the result: nothing may follow it on stdout, so a failure here is only logged. */
    private void closeClients() {
        try {
            producer.close(Duration.ofSeconds(5));
            consumer.close(Duration.ofSeconds(5));
        } catch (RuntimeException e) {
            System.err.println("closing the clients failed: " + e);
        }
    }

    static WorkerFailure asFailure(Exception e) {
        if (e instanceof WorkerFailure failure) return failure;
        e.printStackTrace();
        String kind = e instanceof ConfigException ? "config" : e instanceof TimeoutException ? "timeout" : "failure";
        return new WorkerFailure(kind, e.getClass().getSimpleName() + ": " + e.getMessage());
    }

    private void setUp(JsonNode task) throws Exception {
        if (!task.path("type").asText().equals("task") || task.path("protocol").asInt(1) != 1
                || !task.path("scenario").asText().equals("ping_pong")) {
            throw new WorkerFailure("config", String.format("the java worker runs protocol 1 ping_pong tasks, got %s "
                    + "(protocol %d, scenario %s)", task.path("type").asText(), task.path("protocol").asInt(1),
                    task.path("scenario").asText()));
        }
        partition = new TopicPartition(task.path("topic").asText(), 0);
        payload = Files.readAllBytes(Path.of(task.path("payload_files").path(0).asText()));
        expectedSha256 = task.path("payload_sha256s").path(0).asText().toLowerCase(Locale.ROOT);
        double timeoutS = task.path("timeout_s").asDouble(30);
        timeoutNs = (long) (timeoutS * 1e9);
        timeoutText = timeoutS == Math.rint(timeoutS) ? Long.toString((long) timeoutS) : Double.toString(timeoutS);
        String bootstrap = task.path("bootstrap_servers").asText();
        Properties producerProps = properties(task.path("producer_config"), bootstrap, "producer");
        producerProps.put("key.serializer", ByteArraySerializer.class.getName());
        producerProps.put("value.serializer", ByteArraySerializer.class.getName());
        Properties consumerProps = properties(task.path("consumer_config"), bootstrap, "consumer");
        consumerProps.put("key.deserializer", ByteArrayDeserializer.class.getName());
        consumerProps.put("value.deserializer", ByteArrayDeserializer.class.getName());
        // The clients parse the same Properties into these same classes, so values() is what they use.
        effectiveConfig = Map.of("producer", render(new ProducerConfig(producerProps).values()),
                "consumer", render(new ConsumerConfig(consumerProps).values()));
        producer = new KafkaProducer<>(producerProps);
        consumer = new KafkaConsumer<>(consumerProps);
        consumer.assign(List.of(partition));
        // An explicit end offset: auto.offset.reset could miss the first message or replay old ones.
        consumer.seek(partition, endOffset());
        record("cold", exchange()[2]);
        for (int i = 0; i < task.path("warmup").asInt(0); i++) exchange();
    }

    private long endOffset() throws WorkerFailure {
        try {
            return consumer.endOffsets(List.of(partition), Duration.ofNanos(timeoutNs)).get(partition);
        } catch (TimeoutException e) {
            throw new WorkerFailure("timeout", "no end offset for " + partition + " within " + timeoutText
                    + " s; does the topic exist and is the cluster reachable?");
        }
    }

    static Properties properties(JsonNode config, String bootstrap, String role) {
        Properties props = new Properties();
        config.fields().forEachRemaining(e -> props.put(e.getKey(),
                e.getValue().isValueNode() ? e.getValue().asText() : e.getValue().toString()));
        props.put("bootstrap.servers", bootstrap);
        // A fixed id: otherwise the parsed copy and the client each draw a different "producer-N".
        props.putIfAbsent("client.id", "kafkabench-java-" + role);
        return props;
    }

    private void runRound(long count) throws WorkerFailure {
        long cpu0 = processCpuNanos(), wall0 = System.nanoTime();
        try {
            for (long i = 0; i < count; i++) {
                long[] times = exchange();
                record("produce", times[0]);
                record("consume", times[1]);
                record("e2e", times[2]);
                measured++;
            }
        } finally {
            cpuNs += processCpuNanos() - cpu0;
            measuredWallNs += System.nanoTime() - wall0;
        }
    }

    /** One message in flight: send, wait for the ack, poll until it is back. Returns {produce, consume, e2e} ns. */
    private long[] exchange() throws WorkerFailure {
        long seq = ++sent; // numbered from 1, like the Python worker's messages
        byte[] key = Long.toString(seq).getBytes(StandardCharsets.US_ASCII);
        AckStamp ack = new AckStamp();
        long t0 = System.nanoTime();
        long deadline = t0 + timeoutNs;
        try {
            producer.send(new ProducerRecord<>(partition.topic(), partition.partition(), key, payload), ack);
        } catch (RuntimeException e) {
            throw new WorkerFailure("failure", "send of message " + seq + " failed: " + e);
        }
        long tAck = awaitAck(ack, seq, deadline);
        acked++;
        ConsumerRecords<byte[], byte[]> records = pollUntilRecords(seq, deadline);
        long tIn = System.nanoTime();
        received += records.count();
        checkIntegrity(seq, records);
        return new long[] {tAck - t0, tIn - tAck, tIn - t0};
    }

    private long awaitAck(AckStamp ack, long seq, long deadline) throws WorkerFailure {
        try {
            if (!ack.done.await(deadline - System.nanoTime(), TimeUnit.NANOSECONDS)) {
                throw new WorkerFailure("timeout", "no ack for message " + seq + " within " + timeoutText + " s");
            }
        } catch (InterruptedException e) {
            throw new WorkerFailure("failure", "interrupted waiting for the ack of message " + seq);
        }
        if (ack.error != null) {
            throw new WorkerFailure("failure", "message " + seq + " was not acknowledged: " + ack.error);
        }
        return ack.nanos;
    }

    private ConsumerRecords<byte[], byte[]> pollUntilRecords(long seq, long deadline) throws WorkerFailure {
        for (long left = deadline - System.nanoTime(); left > 0; left = deadline - System.nanoTime()) {
            ConsumerRecords<byte[], byte[]> records = consumer.poll(Duration.ofNanos(left));
            if (!records.isEmpty()) return records;
        }
        throw new WorkerFailure("timeout", "no value for message " + seq + " within " + timeoutText + " s");
    }

    /** Runs after the stamps, so hashing is not part of the latency. */
    private void checkIntegrity(long seq, ConsumerRecords<byte[], byte[]> records) throws WorkerFailure {
        ConsumerRecord<byte[], byte[]> record = records.iterator().next();
        String key = record.key() == null ? "null" : new String(record.key(), StandardCharsets.US_ASCII);
        byte[] value = record.value() == null ? new byte[0] : record.value();
        String sha = sha256(value);
        if (records.count() != 1 || !key.equals(Long.toString(seq)) || value.length != payload.length
                || !sha.equals(expectedSha256)) {
            throw new WorkerFailure("integrity", String.format("message %d: expected key %d, %d bytes, sha256 %.12s; "
                    + "got %d record(s), the first with key %s, %d bytes, sha256 %.12s",
                    seq, seq, payload.length, expectedSha256, records.count(), key, value.length, sha));
        }
    }

    /** Microseconds rounded as core/histogram.py does; a value out of range is counted, never dropped silently. */
    private void record(String metric, long nanos) {
        long micros = Math.floorDiv(nanos + 500, 1000);
        if (nanos < 0 || micros > HIGHEST_US) {
            outOfRange++;
        } else {
            histograms.get(metric).recordValue(micros);
        }
    }

    private Map<String, Object> outcome() {
        Map<String, Object> outcome = new LinkedHashMap<>();
        outcome.put("client_version", VERSION);
        Map<String, String> encoded = new LinkedHashMap<>();
        histograms.forEach((metric, histogram) -> encoded.put(metric, encode(histogram)));
        outcome.put("histograms", encoded);
        outcome.put("counters", Map.of("sent", sent, "acked", acked, "received", received, "errors", errors,
                "out_of_range", outOfRange));
        outcome.put("resources", Map.of("cpu_s", cpuNs / 1e9, "max_rss_mb", peakRssMb()));
        outcome.put("effective_config", effectiveConfig);
        outcome.put("duration_s", measuredWallNs / 1e9);
        return outcome;
    }

    /** HdrHistogram V2 compressed, base64: the encoding Python's hdrh decodes. */
    static String encode(Histogram histogram) {
        ByteBuffer buffer = ByteBuffer.allocate(histogram.getNeededByteBufferCapacity());
        int length = histogram.encodeIntoCompressedByteBuffer(buffer);
        return Base64.getEncoder().encodeToString(Arrays.copyOf(buffer.array(), length));
    }

    static long processCpuNanos() {
        var os = (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
        return os.getProcessCpuTime();
    }

    /** Peak resident set size (VmHWM) in MB; 0 where /proc is not available. */
    static double peakRssMb() {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
                if (line.startsWith("VmHWM:")) return Long.parseLong(line.replaceAll("\\D", "")) / 1024.0;
            }
        } catch (Exception e) {
            System.err.println("cannot read the peak RSS: " + e);
        }
        return 0.0;
    }

    static String sha256(byte[] data) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(data));
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new IllegalStateException(e); // every Java runtime provides SHA-256
        }
    }

    private void send(Map<String, Object> message) {
        try {
            PROTOCOL_OUT.println(JSON.writeValueAsString(message));
            PROTOCOL_OUT.flush();
        } catch (Exception e) {
            throw new IllegalStateException("cannot write a protocol message", e);
        }
    }

    static JsonNode read(BufferedReader in) throws Exception {
        String line = in.readLine();
        while (line != null && line.isBlank()) line = in.readLine();
        return line == null ? null : JSON.readTree(line);
    }

    /** Config values as strings: classes by name, lists comma-joined, passwords as Kafka prints them. */
    static Map<String, Object> render(Map<String, ?> values) {
        Map<String, Object> rendered = new TreeMap<>();
        values.forEach((name, value) -> rendered.put(name, render(value)));
        return rendered;
    }

    static String render(Object value) {
        if (value == null) return null;
        if (value instanceof Class<?> type) return type.getName();
        if (value instanceof List<?> list) {
            return list.stream().map(KafkabenchWorker::render).collect(Collectors.joining(","));
        }
        return value.toString(); // Password.toString() is "[hidden]"
    }

    /** Every setting's default (null when it has none) and type, for the Python side's name checks. */
    static Map<String, Object> describe() {
        Map<String, Object> described = new LinkedHashMap<>();
        described.put("client_version", VERSION);
        described.put("producer", defaults(ProducerConfig.configDef(), ProducerConfig.configNames()));
        described.put("consumer", defaults(ConsumerConfig.configDef(), ConsumerConfig.configNames()));
        described.put("admin", defaults(AdminClientConfig.configDef(), AdminClientConfig.configNames()));
        // Topic-level names as the broker validates them; its internal (test-only) settings are left out.
        described.put("topic", defaults(LogConfig.configDefCopy(), LogConfig.nonInternalConfigNames()));
        described.put("types", Map.of("producer", types(ProducerConfig.configDef()),
                "consumer", types(ConsumerConfig.configDef())));
        return described;
    }

    static Map<String, Object> defaults(ConfigDef def, Collection<String> names) {
        Map<String, Object> defaults = def.defaultValues();
        Map<String, Object> rendered = new TreeMap<>();
        names.forEach(name -> rendered.put(name, render(defaults.get(name))));
        return rendered;
    }

    static Map<String, String> types(ConfigDef def) {
        Map<String, String> types = new TreeMap<>();
        def.configKeys().forEach((name, key) -> types.put(name, key.type.name()));
        return types;
    }

    /** For the interop test fixture: microsecond values on stdin; the values and their Java encoding out. */
    static Map<String, Object> encodeFixture() {
        Histogram histogram = new Histogram(1, HIGHEST_US, 3);
        List<Long> values = new ArrayList<>();
        Scanner scanner = new Scanner(System.in, StandardCharsets.US_ASCII);
        while (scanner.hasNextLong()) values.add(scanner.nextLong());
        values.forEach(histogram::recordValue);
        return new TreeMap<>(Map.of("values_us", values, "encoded", encode(histogram))); // stable key order
    }
}

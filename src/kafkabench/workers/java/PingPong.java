package kafkabench;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import org.apache.kafka.clients.consumer.CloseOptions;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.Callback;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.TimeoutException;
import kafkabench.KafkabenchWorker.WorkerFailure;

/**
 * The ping-pong scenario (latency lab): one message in flight. `round`s of exchanges until `finish`; the
 * first exchange is `cold`, warm-up exchanges are not measured.
 */
final class PingPong implements KafkabenchWorker.Scenario {
    private final JsonNode task;
    private final AtomicLong outOfRange = new AtomicLong();
    private final Map<String, LatencyMetric> histograms = new LinkedHashMap<>();
    private Map<String, Object> effectiveConfig = Map.of();
    private KafkaProducer<byte[], byte[]> producer;
    private KafkaConsumer<byte[], byte[]> consumer;
    private TopicPartition partition;
    private byte[] payload;
    private String expectedSha256;
    private String timeoutText; // as in "no value for message 17 within 30 s"
    private long timeoutNs;
    private long pauseNs; // quiet before each exchange after the cold one, outside every clock
    private long sent, acked, received, errors, measured, cpuNs, measuredWallNs;

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

    PingPong(JsonNode task) {
        this.task = task;
        for (String metric : List.of("cold", "e2e", "produce", "consume")) {
            histograms.put(metric, new LatencyMetric(outOfRange));
        }
    }

    @Override
    public boolean run(Inbox inbox) throws Exception {
        try {
            setUp();
            KafkabenchWorker.sendReady();
            for (JsonNode message = inbox.take(); message != Inbox.END; message = inbox.take()) {
                String type = message.path("type").asText();
                if (type.equals("finish")) return true;
                if (!type.equals("round")) throw new WorkerFailure("config", "unexpected message type '" + type + "'");
                runRound(message.path("count").asLong());
                KafkabenchWorker.send(Map.of("type", "progress", "done", measured));
            }
            return false;
        } catch (Exception e) {
            errors++; // the failed exchange (or set-up) is the error the partial outcome counts
            throw e;
        }
    }

    @Override
    public void close() {
        try {
            producer.close(Duration.ofSeconds(5));
            consumer.close(CloseOptions.timeout(Duration.ofSeconds(5)));
        } catch (RuntimeException e) {
            System.err.println("closing the clients failed: " + e);
        }
    }

    private void setUp() throws Exception {
        partition = new TopicPartition(task.path("topic").asText(), 0);
        payload = Payloads.read(task)[0];
        expectedSha256 = Payloads.sha256s(task).length > 0 ? Payloads.sha256s(task)[0] : "";
        double timeoutS = task.path("timeout_s").asDouble(30);
        timeoutNs = (long) (timeoutS * 1e9);
        timeoutText = KafkabenchWorker.seconds(timeoutS);
        Properties producerProps = ClientConfigs.producer(task);
        Properties consumerProps = ClientConfigs.consumer(task);
        effectiveConfig = Map.of("producer", ClientConfigs.effectiveProducer(producerProps),
                "consumer", ClientConfigs.effectiveConsumer(consumerProps));
        producer = new KafkaProducer<>(producerProps);
        consumer = new KafkaConsumer<>(consumerProps);
        consumer.assign(List.of(partition));
        // An explicit end offset: auto.offset.reset could miss the first message or replay old ones.
        consumer.seek(partition, endOffset());
        Params params = new Params(task);
        double pauseS = params.number("pause_s", 0);
        if (pauseS < 0) throw params.invalid("pause_s", "a number of seconds >= 0");
        pauseNs = (long) (pauseS * 1e9);
        histograms.get("cold").record(exchange()[2]);
        for (int i = 0; i < task.path("warmup").asInt(0); i++) {
            pause();
            exchange();
        }
    }

    private long endOffset() throws WorkerFailure {
        try {
            return consumer.endOffsets(List.of(partition), Duration.ofNanos(timeoutNs)).get(partition);
        } catch (TimeoutException e) {
            throw new WorkerFailure("timeout", "no end offset for " + partition + " within " + timeoutText
                    + " s; does the topic exist and is the cluster reachable?");
        }
    }

    private void runRound(long count) throws WorkerFailure {
        long cpu0 = Resources.processCpuNanos(), wall0 = System.nanoTime();
        try {
            for (long i = 0; i < count; i++) {
                pause();
                long[] times = exchange();
                histograms.get("produce").record(times[0]);
                histograms.get("consume").record(times[1]);
                histograms.get("e2e").record(times[2]);
                measured++;
            }
        } finally {
            cpuNs += Resources.processCpuNanos() - cpu0;
            measuredWallNs += System.nanoTime() - wall0;
        }
    }

    private void pause() {
        if (pauseNs > 0) LockSupport.parkNanos(pauseNs);
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
        String sha = Payloads.sha256(value);
        if (records.count() != 1 || !key.equals(Long.toString(seq)) || value.length != payload.length
                || !sha.equals(expectedSha256)) {
            throw new WorkerFailure("integrity", String.format("message %d: expected key %d, %d bytes, sha256 %.12s; "
                    + "got %d record(s), the first with key %s, %d bytes, sha256 %.12s",
                    seq, seq, payload.length, expectedSha256, records.count(), key, value.length, sha));
        }
    }

    @Override
    public Map<String, Object> outcome() {
        Map<String, Object> outcome = new LinkedHashMap<>();
        outcome.put("client_version", KafkabenchWorker.VERSION);
        Map<String, String> encoded = new LinkedHashMap<>();
        histograms.forEach((metric, histogram) -> encoded.put(metric, histogram.encodeTotal()));
        outcome.put("histograms", encoded);
        outcome.put("counters", Map.of("sent", sent, "acked", acked, "received", received, "errors", errors,
                "out_of_range", outOfRange.get()));
        outcome.put("resources", Map.of("cpu_s", cpuNs / 1e9, "max_rss_mb", Resources.peakRssMb()));
        outcome.put("effective_config", effectiveConfig);
        outcome.put("duration_s", measuredWallNs / 1e9);
        return outcome;
    }
}

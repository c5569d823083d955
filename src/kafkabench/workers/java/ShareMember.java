package kafkabench;

import java.io.IOException;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.TreeMap;
import org.apache.kafka.clients.consumer.AcknowledgeType;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicIdPartition;
import org.apache.kafka.common.errors.AuthorizationException;
import org.apache.kafka.common.errors.UnsupportedVersionException;
import kafkabench.KafkabenchWorker.WorkerFailure;

/**
 * The delivery_consumer scenario's share mode, the twin of workers/share_consumer_confluent.py: a member of the share
 * group `group` (KIP-932) reading the delivery ids of task.topic until `finish`, with the settings DeliveryConsumer
 * parsed and checked.
 *
 * <p>Each poll's records (at most `batch`: max.poll.records): every record's delivery count stored in delivered.npy
 * as it arrives, the records processed (process_ms of sleep, then counted in processed.npy; without a processing
 * time, the whole poll recorded at one time, as the Python worker does), each acknowledged ACCEPT
 * (share.acknowledgement.mode=explicit), and the acknowledgements committed with commitSync, whose answer per
 * partition says whether the broker took them: a refusal is counted (commit_failures) and those records come again.
 * Ready once subscribed; nothing is polled before `start`, so nothing is acquired. Progress as DeliveryConsumer's:
 * acked counts the records whose acknowledgements were confirmed, and the partitions held are none (the broker hands
 * a share member records, not partitions).
 */
final class ShareMember implements KafkabenchWorker.Scenario {
    private static final long PROGRESS_NS = 200_000_000;
    private static final Duration POLL = Duration.ofMillis(100);

    private final DeliveryConsumer settings;
    private Map<String, Object> effectiveConfig = Map.of();
    private KafkaShareConsumer<byte[], byte[]> consumer;
    private DeliveryConsumer.Processed processed;
    private History.Column delivered;
    private boolean started;
    private long processedRecords, commits, strays, commitFailures, acknowledgedRecords;
    private long startNs, firstNs, lastNs, cpuStartNs, nextProgressNs;

    ShareMember(DeliveryConsumer settings) {
        this.settings = settings;
    }

    @Override
    public boolean run(Inbox inbox) throws Exception {
        setUp();
        KafkabenchWorker.sendReady();
        switch (Startup.Signal.of(inbox.take())) {
            case GONE: return false;
            case FINISH:
                closeConsumer();
                return true;
            case START: break;
        }
        startNs = System.nanoTime();
        cpuStartNs = Resources.processCpuNanos();
        started = true;
        nextProgressNs = startNs;
        while (!inbox.finishRequested()) {
            progress(false);
            ConsumerRecords<byte[], byte[]> records = consumer.poll(POLL);
            if (records.isEmpty()) continue;
            if (firstNs == 0) firstNs = System.nanoTime();
            processAndAcknowledge(records);
        }
        progress(true);
        closeConsumer();
        return true;
    }

    private void setUp() throws WorkerFailure {
        Properties props = ClientConfigs.consumer(settings.task);
        props.put("group.id", settings.group);
        props.put("max.poll.records", Integer.toString(settings.batch));
        props.put("share.acknowledgement.mode", "explicit");
        // as given: the share consumer's parsed config (ShareConsumerConfig) is not public, and ConsumerConfig
        // refuses share.acknowledgement.mode under the classic protocol it defaults to
        Map<String, Object> given = new TreeMap<>();
        props.forEach((key, value) -> given.put(key.toString(), value));
        effectiveConfig = Map.of("consumer", ClientConfigs.render(given));
        try {
            processed = DeliveryConsumer.Processed.create(settings.historyDir, settings.producerId, settings.count);
            delivered = new History.Column(settings.historyDir.resolve("delivered.npy"), "|u1", 1, settings.count);
        } catch (IOException | RuntimeException e) {
            throw new WorkerFailure("failure", "cannot map the processed history in " + settings.historyDir + ": " + e);
        }
        consumer = new KafkaShareConsumer<>(props);
        consumer.subscribe(List.of(settings.topic));
    }

    /** The delivery counts first (a member killed while processing leaves them), then each record processed and
     *  accepted, then the acknowledgements committed. */
    private void processAndAcknowledge(ConsumerRecords<byte[], byte[]> records) {
        long[] sequences = new long[records.count()];
        int index = 0;
        for (ConsumerRecord<byte[], byte[]> record : records) {
            long sequence = DeliveryConsumer.sequence(record.value(), settings.producerId, settings.count);
            sequences[index++] = sequence;
            if (sequence >= 0) delivered.putByte(sequence, (byte) Math.min(255, record.deliveryCount().orElse((short) 0)));
        }
        index = 0;
        boolean paced = settings.processNs > 0; // without a processing time, the batch is processed at one time
        long batchAt = paced ? 0 : DeliveryConsumer.Processed.wallNanos();
        for (ConsumerRecord<byte[], byte[]> record : records) {
            long sequence = sequences[index++];
            if (sequence < 0) {
                strays++;
            } else if (paced) {
                DeliveryConsumer.pause(settings.processNs);
                processed.increment(sequence, record.timestamp());
                processedRecords++;
                lastNs = System.nanoTime();
                progress(false);
            } else {
                processed.increment(sequence, record.timestamp(), batchAt);
                processedRecords++;
            }
            consumer.acknowledge(record, AcknowledgeType.ACCEPT);
        }
        if (!paced) {
            lastNs = System.nanoTime();
            progress(false);
        }
        Map<TopicIdPartition, Optional<KafkaException>> answers;
        try {
            answers = consumer.commitSync(Duration.ofNanos(settings.timeoutNs));
        } catch (AuthorizationException | UnsupportedVersionException e) {
            throw e; // nothing a later commit would mend
        } catch (KafkaException e) {
            commitFailures++;
            System.err.println("commitSync of " + records.count() + " acknowledgements failed: " + e);
            return;
        }
        if (answers.values().stream().anyMatch(Optional::isPresent)) {
            commitFailures++;
            System.err.println("acknowledgements refused: " + answers);
            return;
        }
        commits++;
        acknowledgedRecords += records.count();
        lastNs = System.nanoTime();
    }

    private void progress(boolean force) {
        long now = System.nanoTime();
        if (!force && now - nextProgressNs < 0) return;
        nextProgressNs = now + PROGRESS_NS;
        DeliveryConsumer.sendProgress(processedRecords, acknowledgedRecords, List.of());
    }

    /** close() commits what is acknowledged and leaves the group, within timeout_s. */
    private void closeConsumer() {
        if (consumer == null) return;
        try {
            consumer.close(Duration.ofNanos(settings.timeoutNs));
        } catch (RuntimeException e) {
            System.err.println("closing the share consumer failed: " + e);
        }
        consumer = null;
    }

    @Override
    public Map<String, Object> outcome() {
        Map<String, Object> counters = new LinkedHashMap<>();
        counters.put("processed", processedRecords);
        counters.put("commits", commits);
        counters.put("strays", strays);
        counters.put("rebalances", 0);
        counters.put("commit_failures", commitFailures);
        return DeliveryConsumer.outcome(counters, effectiveConfig, started, cpuStartNs, startNs, firstNs, lastNs);
    }

    @Override
    public void close() {
        closeConsumer();
    }
}

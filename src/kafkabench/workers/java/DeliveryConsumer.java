package kafkabench;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.locks.LockSupport;
import java.util.function.ToIntFunction;
import org.apache.kafka.clients.consumer.CloseOptions;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.consumer.SubscriptionPattern;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.AuthorizationException;
import org.apache.kafka.common.errors.FencedInstanceIdException;
import org.apache.kafka.common.errors.InvalidProducerEpochException;
import org.apache.kafka.common.errors.OutOfOrderSequenceException;
import org.apache.kafka.common.errors.ProducerFencedException;
import org.apache.kafka.common.errors.TimeoutException;
import org.apache.kafka.common.errors.UnsupportedVersionException;
import kafkabench.KafkabenchWorker.WorkerFailure;

/**
 * The delivery_consumer scenario (delivery lab's consumers and copiers), the twin of workers/delivery_consumer.py:
 * one member of a consumer group reading the delivery ids of task.topic (producer `producer`, sequences
 * 0..count-1) until `finish`.
 *
 * <ul>
 * <li>auto-commit: each record processed; the client commits in the background (and on close).
 * <li>commit-after (at-least-once): a batch (one poll) processed, then its offsets committed with commitSync.
 * <li>commit-before (at-most-once): a batch's offsets committed, then its records processed; a commit that fails
 *     leaves the batch unprocessed (a rebalance made it another member's).
 * <li>copy (exactly-once): a batch written unchanged to the same partition of output_topic in a transaction that
 *     carries the batch's offsets (sendOffsetsToTransaction with the consumer's group metadata), then committed,
 *     as Apache Kafka's TransactionalMessageCopier does: an abortable error aborts the transaction and rewinds the
 *     consumer to its committed offsets; a fenced or fatal producer ends the worker with an `error`.
 * </ul>
 *
 * <p>Processing (consumer modes) is process_ms of sleep, then the record's sequence counted in processed.npy,
 * mapped read-write, so a consumer killed with SIGKILL keeps every count it stored; each confirmed commit is a
 * line of commits.txt, written as soon as commitSync returned (core/delivery_processed.py reads both). A record
 * that is no id of the input producer below count is a stray: counted, neither processed nor copied.
 *
 * <p>A member given a `pattern` (a groups cell's subscribe-topic) subscribes to the topics it matches: under the
 * consumer protocol as a SubscriptionPattern, which the broker resolves (RE2/J), under the classic one as a
 * java.util.regex.Pattern matched on the client's metadata. Records of new_topic (new_producer's ids) go to a second
 * history in second-input/, and its partitions are numbered from numbered_from on in commits.txt and the progress'
 * assignment.
 *
 * <p>The member is `ready` once subscribed, with no assignment awaited (of N members some may get none); until
 * `start` it polls with its partitions paused, so that the group forms before anything is read. A `progress` every
 * 0.2 s: done = records processed (copy: copied in committed transactions), acked = records whose offsets a
 * confirmed commit covers (copy: read in committed transactions; auto-commit: 0, the client's background commits
 * are not reported). On `finish` the batch under way is completed (and committed, or its transaction committed),
 * the clients are closed (auto-commit: the close commits), and then the result goes out.
 */
final class DeliveryConsumer implements KafkabenchWorker.Scenario {
    static final String[] MODES = {"auto-commit", "commit-after", "commit-before", "copy", "share"};
    static final String[] PARAMS = {"mode", "group", "producer", "count", "batch", "process_ms", "history_dir",
        "output_topic", "pattern", "new_topic", "new_producer", "new_count", "numbered_from"};
    static final String SECOND_INPUT = "second-input"; // core/delivery_processed.py's: the new topic's history
    static final long MAX_COUNT = 1L << 32; // as DeliveryConsumerParams.count allows
    private static final long PROGRESS_NS = 200_000_000;
    private static final Duration POLL = Duration.ofMillis(100);
    private static final Duration POLL_PAUSED = Duration.ofMillis(50); // until `start`: how soon it is seen

    // the task's settings, parsed and checked (ShareMember, the share mode, reads them too)
    final JsonNode task;
    final String topic, mode, group, outputTopic;
    final int producerId, batch;
    final long count, processNs, timeoutNs;
    // a subscribe-topic member: the topics `pattern` matches; newTopic's records (newProducer's ids) go to a second
    // history, and its partitions are numbered from numberedFrom on (key)
    final String pattern, newTopic;
    final int newProducer, numberedFrom;
    final long newCount;
    final Path historyDir;
    final boolean copy;
    private Map<String, Object> effectiveConfig = Map.of();
    private KafkaConsumer<byte[], byte[]> consumer;
    private KafkaProducer<byte[], byte[]> producer;
    private Processed processed, second;
    private volatile boolean started;
    // counters: processed (copy: copied in committed transactions), commits (commitSync calls that succeeded;
    // copy: transactions committed), aborted (copy: transactions aborted), strays, rebalances (assignments
    // received), commit_failures (commitSync calls that failed without ending the run)
    private long processedRecords, commits, aborted, strays, rebalances, commitFailures;
    private long committedRecords; // for progress' acked
    private long startNs, firstNs, lastNs, cpuStartNs, nextProgressNs;

    DeliveryConsumer(JsonNode task) throws WorkerFailure {
        Params params = new Params(task);
        this.task = task;
        topic = task.path("topic").asText();
        params.only(PARAMS);
        mode = params.text("mode", MODES);
        copy = mode.equals("copy");
        group = params.text("group");
        producerId = (int) inRange(params, "producer", params.count("producer"), 0, 0, 0xFFFF);
        Long counted = params.count("count");
        if (counted == null || counted < 1 || counted > MAX_COUNT) {
            throw params.invalid("count", "a count from 1 to " + MAX_COUNT);
        }
        count = counted;
        batch = (int) inRange(params, "batch", params.count("batch"), 100, 1, Integer.MAX_VALUE);
        double processMs = params.number("process_ms", 0);
        if (!(processMs >= 0) || Double.isInfinite(processMs)) throw params.invalid("process_ms", "a number >= 0");
        processNs = Math.round(processMs * 1e6);
        String history = params.optionalText("history_dir");
        outputTopic = params.optionalText("output_topic");
        if (copy != (outputTopic != null) || copy == (history != null)) {
            throw params.refused("params.output_topic goes with mode copy, params.history_dir with the other modes");
        }
        if (copy && processMs != 0) {
            throw params.refused("params.process_ms is for the consumer modes: a copier's processing is its copy");
        }
        historyDir = history == null ? null : Path.of(history);
        timeoutNs = (long) (task.path("timeout_s").asDouble(30) * 1e9);
        pattern = params.optionalText("pattern");
        newTopic = params.optionalText("new_topic");
        Long newProducerId = params.count("new_producer"), newCounted = params.count("new_count"),
            numbered = params.count("numbered_from");
        boolean any = pattern != null || newTopic != null || newProducerId != null || newCounted != null
            || numbered != null;
        if (any && (pattern == null || newTopic == null || newProducerId == null || newCounted == null
                || numbered == null)) {
            throw params.refused("params.pattern, new_topic, new_producer, new_count and numbered_from go together");
        }
        if (any && (copy || mode.equals("share"))) {
            throw params.refused("params.pattern: mode " + mode + " reads task.topic alone");
        }
        if (pattern != null && !pattern.startsWith("^")) throw params.invalid("pattern", "a regular expression from ^");
        newProducer = any ? (int) inRange(params, "new_producer", newProducerId, 0, 0, 0xFFFF) : -1;
        if (any && newProducer == producerId) {
            throw params.refused("params.new_producer: new_topic's producer is another than task.topic's");
        }
        newCount = any ? inRange(params, "new_count", newCounted, 1, 1, MAX_COUNT) : 0;
        numberedFrom = any ? (int) inRange(params, "numbered_from", numbered, 1, 1, Integer.MAX_VALUE) : 0;
    }

    /** An optional count (fallback when absent) in [min, max]. */
    private static long inRange(Params params, String name, Long value, long fallback, long min, long max)
            throws WorkerFailure {
        if (value == null) return fallback;
        if (value < min || value > max) throw params.invalid(name, "a count from " + min + " to " + max);
        return value;
    }

    /** Counts each assignment; until `start`, what is assigned stays paused. */
    private final class Rebalances implements ConsumerRebalanceListener {
        @Override
        public void onPartitionsAssigned(Collection<TopicPartition> partitions) {
            rebalances++;
            if (!started) consumer.pause(partitions);
        }

        @Override
        public void onPartitionsRevoked(Collection<TopicPartition> partitions) {
        }
    }

    @Override
    public boolean run(Inbox inbox) throws Exception {
        setUp();
        KafkabenchWorker.sendReady();
        switch (Startup.Signal.of(awaitMessage(inbox))) {
            case GONE: return false;
            case FINISH:
                closeClients();
                return true;
            case START: break;
        }
        startNs = System.nanoTime();
        cpuStartNs = Resources.processCpuNanos();
        started = true;
        consumer.resume(consumer.assignment());
        nextProgressNs = startNs;
        while (!inbox.finishRequested()) {
            progress(false);
            ConsumerRecords<byte[], byte[]> records = consumer.poll(POLL);
            if (records.isEmpty()) continue;
            if (firstNs == 0) firstNs = System.nanoTime();
            switch (mode) {
                case "auto-commit" -> processAll(records);
                case "commit-after" -> {
                    processAll(records);
                    commit(records);
                }
                case "commit-before" -> {
                    if (commit(records)) processAll(records);
                }
                default -> copyAll(records);
            }
        }
        progress(true);
        closeClients(); // before the result: auto-commit's last commit is in the close
        return true;
    }

    private void setUp() throws WorkerFailure {
        Properties props = ClientConfigs.consumer(task);
        props.put("group.id", group);
        props.put("max.poll.records", Integer.toString(batch));
        props.put("auto.offset.reset", "earliest");
        props.put("enable.auto.commit", Boolean.toString(mode.equals("auto-commit")));
        if (copy) props.put("isolation.level", "read_committed");
        Map<String, Object> effective = new LinkedHashMap<>();
        effective.put("consumer", ClientConfigs.effectiveConsumer(props));
        Properties producerProps = null;
        if (copy) {
            producerProps = ClientConfigs.producer(task);
            if (producerProps.getProperty("transactional.id", "").isEmpty()) {
                throw new WorkerFailure("config", "delivery_consumer: mode copy needs a transactional.id in the "
                        + "producer config");
            }
            effective.put("producer", ClientConfigs.effectiveProducer(producerProps));
        }
        effectiveConfig = effective;
        consumer = new KafkaConsumer<>(props);
        int partitions = partitionCount(topic);
        if (copy) {
            int outputPartitions = partitionCount(outputTopic);
            if (outputPartitions < partitions) {
                throw new WorkerFailure("config", String.format("delivery_consumer: output topic %s has %d partitions, "
                        + "fewer than the %d of %s: each copy goes to its input's partition number", outputTopic,
                        outputPartitions, partitions, topic));
            }
            producer = new KafkaProducer<>(producerProps);
            try {
                producer.initTransactions(); // within max.block.ms; fences an earlier copier of this transactional.id
            } catch (RuntimeException e) {
                WorkerFailure failure = KafkabenchWorker.asFailure(e);
                throw new WorkerFailure(failure.kind, "initTransactions failed: " + failure.getMessage());
            }
        } else {
            try {
                processed = Processed.create(historyDir, producerId, count);
                if (pattern != null) second = Processed.create(historyDir.resolve(SECOND_INPUT), newProducer, newCount);
            } catch (IOException | RuntimeException e) {
                throw new WorkerFailure("failure", "cannot map the processed history in " + historyDir + ": " + e);
            }
        }
        if (pattern == null) {
            consumer.subscribe(List.of(topic), new Rebalances());
        } else if ("consumer".equalsIgnoreCase(props.getProperty("group.protocol", "classic"))) {
            consumer.subscribe(new SubscriptionPattern(pattern), new Rebalances()); // resolved by the broker (RE2/J)
        } else {
            consumer.subscribe(java.util.regex.Pattern.compile(pattern), new Rebalances()); // matched on metadata
        }
    }

    /** The number the member gives a partition: its own on task.topic, from numberedFrom on for newTopic's. */
    private int key(TopicPartition partition) {
        return partition.topic().equals(topic) ? partition.partition() : numberedFrom + partition.partition();
    }

    private int partitionCount(String name) throws WorkerFailure {
        try {
            int partitions = consumer.partitionsFor(name, Duration.ofNanos(timeoutNs)).size();
            if (partitions > 0) return partitions;
        } catch (TimeoutException e) {
            // as no partitions
        }
        throw new WorkerFailure("failure", "topic " + name + " has no partitions within "
                + KafkabenchWorker.seconds(timeoutNs / 1e9) + " s (does it exist?)");
    }

    /** The next message from the orchestrator, polling (paused) while it has not come, so the group forms. */
    private JsonNode awaitMessage(Inbox inbox) {
        for (JsonNode message = inbox.poll(); ; message = inbox.poll()) {
            if (message != null) return message;
            if (!consumer.poll(POLL_PAUSED).isEmpty()) {
                throw new IllegalStateException("poll() returned records of paused partitions");
            }
        }
    }

    /** Consumer modes: each record processed in turn, the whole batch even when a finish has come. */
    private void processAll(ConsumerRecords<byte[], byte[]> records) {
        for (ConsumerRecord<byte[], byte[]> record : records) {
            long sequence = sequence(record.value(), producerId, count);
            Processed into = processed;
            if (sequence < 0 && second != null) {
                sequence = sequence(record.value(), newProducer, newCount);
                into = second;
            }
            if (sequence < 0) {
                strays++;
            } else {
                if (processNs > 0) pause(processNs);
                into.increment(sequence, record.timestamp());
                processedRecords++;
                lastNs = System.nanoTime();
            }
            progress(false);
        }
    }

    static void pause(long nanos) {
        long deadline = System.nanoTime() + nanos;
        for (long left = nanos; left > 0; left = deadline - System.nanoTime()) LockSupport.parkNanos(left);
    }

    /** The record's sequence, or -1 for a stray: no id, another producer's, or a sequence not below count. */
    static long sequence(byte[] value, int producerId, long count) {
        if (value == null || value.length < Delivery.ID_BYTES) return -1;
        for (int i = 0; i < Delivery.MAGIC.length; i++) if (value[i] != Delivery.MAGIC[i]) return -1;
        ByteBuffer id = ByteBuffer.wrap(value); // big-endian
        if ((id.getShort(4) & 0xFFFF) != producerId) return -1;
        long sequence = id.getLong(6); // beyond 2^63: negative, a stray too
        return sequence >= 0 && sequence < count ? sequence : -1;
    }

    /** Per partition of the batch, the offset after its last record (with that record's leader epoch). */
    private static Map<TopicPartition, OffsetAndMetadata> nextOffsets(ConsumerRecords<byte[], byte[]> records) {
        Map<TopicPartition, OffsetAndMetadata> offsets = new HashMap<>();
        for (TopicPartition partition : records.partitions()) {
            List<ConsumerRecord<byte[], byte[]>> inPartition = records.records(partition);
            ConsumerRecord<byte[], byte[]> last = inPartition.get(inPartition.size() - 1);
            offsets.put(partition, new OffsetAndMetadata(last.offset() + 1, last.leaderEpoch(), ""));
        }
        return offsets;
    }

    /** commitSync of the batch's offsets, then its line in commits.txt; false when the commit failed (a rebalance
     *  gave the partitions to another member, or no answer within timeout_s): counted, and the run goes on. */
    private boolean commit(ConsumerRecords<byte[], byte[]> records) {
        Map<TopicPartition, OffsetAndMetadata> offsets = nextOffsets(records);
        try {
            consumer.commitSync(offsets, Duration.ofNanos(timeoutNs));
        } catch (FencedInstanceIdException | AuthorizationException | UnsupportedVersionException e) {
            throw e; // nothing a later commit would mend
        } catch (KafkaException e) {
            commitFailures++;
            System.err.println("commitSync of " + records.count() + " records failed: " + e);
            return false;
        }
        processed.appendCommit(offsets, this::key);
        commits++;
        committedRecords += records.count();
        lastNs = System.nanoTime();
        return true;
    }

    /** copy: the batch in one transaction with its offsets. Fenced or fatal: an `error`, the orchestrator starts
     *  another copier; abortable: aborted, the consumer rewound to its committed offsets, and on. */
    private void copyAll(ConsumerRecords<byte[], byte[]> records) throws WorkerFailure {
        long copied = 0, skipped = 0;
        try {
            producer.beginTransaction();
            for (ConsumerRecord<byte[], byte[]> record : records) {
                if (sequence(record.value(), producerId, count) < 0) {
                    skipped++;
                    continue;
                }
                producer.send(new ProducerRecord<>(outputTopic, record.partition(), null, record.value()));
                copied++;
            }
            producer.sendOffsetsToTransaction(nextOffsets(records), consumer.groupMetadata());
            commitTransaction();
        } catch (ProducerFencedException | InvalidProducerEpochException | OutOfOrderSequenceException
                 | AuthorizationException | UnsupportedVersionException | FencedInstanceIdException e) {
            throw new WorkerFailure("failure", "the copier's producer can go no further: " + e);
        } catch (KafkaException e) {
            System.err.println("aborting a transaction of " + records.count() + " records: " + e);
            abortTransaction(e);
            rewind();
            aborted++;
            progress(false);
            return;
        }
        processedRecords += copied;
        strays += skipped;
        commits++;
        committedRecords += records.count();
        lastNs = System.nanoTime();
        progress(false);
    }

    /** A commit that timed out must be retried (the producer refuses anything else); tried again within timeout_s,
     *  after which the transaction is neither committed nor abortable here: the end of this copier. */
    private void commitTransaction() throws WorkerFailure {
        long deadline = System.nanoTime() + timeoutNs;
        while (true) {
            try {
                producer.commitTransaction();
                return;
            } catch (TimeoutException e) {
                if (System.nanoTime() - deadline >= 0) {
                    throw new WorkerFailure("failure", "commitTransaction timed out again and again for "
                            + KafkabenchWorker.seconds(timeoutNs / 1e9) + " s (timeout_s): " + e);
                }
                System.err.println("commitTransaction timed out, retrying it: " + e);
            }
        }
    }

    private void abortTransaction(KafkaException cause) throws WorkerFailure {
        long deadline = System.nanoTime() + timeoutNs;
        while (true) {
            try {
                producer.abortTransaction();
                return;
            } catch (TimeoutException e) {
                if (System.nanoTime() - deadline >= 0) {
                    throw new WorkerFailure("failure", "after " + cause + ", abortTransaction timed out for "
                            + KafkabenchWorker.seconds(timeoutNs / 1e9) + " s (timeout_s): " + e);
                }
            } catch (KafkaException e) {
                throw new WorkerFailure("failure", "after " + cause + ", the abort failed too: " + e);
            }
        }
    }

    /** Every assigned partition back to the group's committed offset, or to its beginning when it has none. */
    private void rewind() {
        Set<TopicPartition> assignment = consumer.assignment();
        if (assignment.isEmpty()) return;
        Map<TopicPartition, OffsetAndMetadata> committed = consumer.committed(assignment, Duration.ofNanos(timeoutNs));
        for (TopicPartition partition : assignment) {
            OffsetAndMetadata offset = committed.get(partition);
            if (offset != null) {
                consumer.seek(partition, offset);
            } else {
                consumer.seekToBeginning(List.of(partition));
            }
        }
    }

    /** A `progress` when 0.2 s have passed since the last one (or at once with force). */
    private void progress(boolean force) {
        long now = System.nanoTime();
        if (!force && now - nextProgressNs < 0) return;
        nextProgressNs = now + PROGRESS_NS;
        List<Integer> assigned = new ArrayList<>();
        for (TopicPartition partition : consumer.assignment()) assigned.add(key(partition));
        Collections.sort(assigned);
        sendProgress(processedRecords, committedRecords, assigned);
    }

    /** A `progress` of a member (ShareMember's too: it holds no partitions of its own). */
    static void sendProgress(long done, long acked, List<Integer> assigned) {
        Map<String, Object> progress = new LinkedHashMap<>();
        progress.put("type", "progress");
        progress.put("done", done);
        progress.put("acked", acked);
        progress.put("window", null);
        progress.put("assigned", assigned);
        KafkabenchWorker.send(progress);
    }

    /** Closes what is open: the consumer (auto-commit: its last commit, within timeout_s), then the producer. */
    private void closeClients() {
        if (consumer != null) {
            try {
                consumer.close(CloseOptions.timeout(Duration.ofNanos(timeoutNs)));
            } catch (RuntimeException e) {
                System.err.println("closing the consumer failed: " + e);
            }
            consumer = null;
        }
        if (producer != null) {
            try {
                producer.close(Duration.ofNanos(timeoutNs));
            } catch (RuntimeException e) {
                System.err.println("closing the producer failed: " + e);
            }
            producer = null;
        }
    }

    @Override
    public Map<String, Object> outcome() {
        Map<String, Object> counters = new LinkedHashMap<>();
        counters.put("processed", processedRecords);
        counters.put("commits", commits);
        counters.put("aborted", aborted);
        counters.put("strays", strays);
        counters.put("rebalances", rebalances);
        counters.put("commit_failures", commitFailures);
        return outcome(counters, effectiveConfig, started, cpuStartNs, startNs, firstNs, lastNs);
    }

    /** A member's result body (ShareMember's too): its counters, resources and effective config, and its stopwatch. */
    static Map<String, Object> outcome(Map<String, Object> counters, Map<String, Object> effectiveConfig,
                                       boolean started, long cpuStartNs, long startNs, long firstNs, long lastNs) {
        Map<String, Object> outcome = new LinkedHashMap<>();
        outcome.put("client_version", KafkabenchWorker.VERSION);
        outcome.put("counters", counters);
        double cpuS = started ? (Resources.processCpuNanos() - cpuStartNs) / 1e9 : 0.0;
        outcome.put("resources", Map.of("cpu_s", cpuS, "max_rss_mb", Resources.peakRssMb()));
        outcome.put("effective_config", effectiveConfig);
        Map<String, Object> timings = new LinkedHashMap<>();
        if (firstNs > 0) timings.put("first_record_s", (firstNs - startNs) / 1e9);
        outcome.put("timings", timings);
        // The first poll that returned records to the last record processed, or the last commit (commit-after,
        // copy): the pace of the work itself, whatever time passed before `finish`.
        boolean worked = firstNs > 0 && lastNs > 0;
        outcome.put("start_ns", worked ? firstNs : null);
        outcome.put("end_ns", worked ? lastNs : null);
        outcome.put("duration_s", worked ? (lastNs - firstNs) / 1e9 : 0.0);
        return outcome;
    }

    /** The clients are closed in run(), before the result; here only what a failure left open. */
    @Override
    public void close() {
        closeClients();
    }

    /**
     * The processed history of core/delivery_processed.py: processed.npy (uint8 per sequence, saturating at 255)
     * mapped read-write, so a count is in the page cache once stored and survives a kill; processed_at.npy and
     * created_at.npy (int64 per sequence: when it was last processed, wall-clock ns; the record's timestamp, ms);
     * processed.meta; commits.txt, one line appended per confirmed commit in one write.
     */
    static final class Processed {
        static final int FORMAT = 1;
        private static final int CHUNK_SHIFT = 30; // 1 GiB per mapping: one MappedByteBuffer holds < 2 GiB
        private static final long CHUNK_MASK = (1L << CHUNK_SHIFT) - 1;
        private final MappedByteBuffer[] chunks;
        private final History.Column processedAt;
        private final History.Column createdAt;
        private final FileChannel commits;

        private Processed(MappedByteBuffer[] chunks, History.Column processedAt, History.Column createdAt,
                          FileChannel commits) {
            this.chunks = chunks;
            this.processedAt = processedAt;
            this.createdAt = createdAt;
            this.commits = commits;
        }

        static Processed create(Path directory, int producer, long count) throws IOException {
            Files.createDirectories(directory);
            byte[] header = npyHeader("|u1", count);
            MappedByteBuffer[] chunks = new MappedByteBuffer[(int) ((count + CHUNK_MASK) >>> CHUNK_SHIFT)];
            try (FileChannel channel = FileChannel.open(directory.resolve("processed.npy"), StandardOpenOption.CREATE,
                    StandardOpenOption.TRUNCATE_EXISTING, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
                channel.write(ByteBuffer.wrap(header), 0);
                for (int i = 0; i < chunks.length; i++) {
                    long first = (long) i << CHUNK_SHIFT;
                    // Mapping past the end grows the file with zeros; the mapping outlives the channel.
                    chunks[i] = channel.map(FileChannel.MapMode.READ_WRITE, header.length + first,
                            Math.min(CHUNK_MASK + 1, count - first));
                }
            }
            History.Column processedAt = new History.Column(directory.resolve("processed_at.npy"), "<i8", 8, count);
            History.Column createdAt = new History.Column(directory.resolve("created_at.npy"), "<i8", 8, count);
            Files.writeString(directory.resolve("processed.meta"), FORMAT + " " + producer + " " + count + "\n",
                    StandardCharsets.US_ASCII);
            Path commitsFile = directory.resolve("commits.txt");
            Files.write(commitsFile, new byte[0]); // empty, then appended to
            FileChannel commits = FileChannel.open(commitsFile, StandardOpenOption.APPEND);
            return new Processed(chunks, processedAt, createdAt, commits);
        }

        /** NPY 1.0 for a 1-d little-endian array, as numpy.lib.format writes it: the dict with room for the
         *  shape to grow, spaces and a newline up to a multiple of 64 bytes in all. */
        static byte[] npyHeader(String descr, long count) {
            String shape = Long.toString(count);
            String dict = "{'descr': '" + descr + "', 'fortran_order': False, 'shape': (" + shape + ",), }"
                    + " ".repeat(Math.max(0, 21 - shape.length()));
            int unpadded = 10 + dict.length() + 1;
            int length = dict.length() + 1 + (64 - unpadded % 64) % 64;
            ByteBuffer header = ByteBuffer.allocate(10 + length).order(ByteOrder.LITTLE_ENDIAN);
            header.put((byte) 0x93).put("NUMPY".getBytes(StandardCharsets.US_ASCII)).put((byte) 1).put((byte) 0);
            header.putShort((short) length);
            header.put((dict + " ".repeat(length - dict.length() - 1) + "\n").getBytes(StandardCharsets.US_ASCII));
            return header.array();
        }

        /** The sequence processed once more (at most 255 counted), now; createdMs is the record's timestamp. */
        void increment(long sequence, long createdMs) {
            increment(sequence, createdMs, wallNanos());
        }

        /** The same at atNs (wall clock): a batch processed at once, as the Python worker records one. */
        void increment(long sequence, long createdMs, long atNs) {
            MappedByteBuffer chunk = chunks[(int) (sequence >>> CHUNK_SHIFT)];
            int at = (int) (sequence & CHUNK_MASK);
            int times = chunk.get(at) & 0xFF;
            if (times < 255) chunk.put(at, (byte) (times + 1));
            processedAt.putLong(sequence, atNs);
            createdAt.putLong(sequence, createdMs);
        }

        static long wallNanos() {
            Instant now = Instant.now();
            return now.getEpochSecond() * 1_000_000_000L + now.getNano();
        }

        /** "PARTITION NEXT_OFFSET" pairs, partitions (each as `key` numbers it) ascending, as one write. */
        void appendCommit(Map<TopicPartition, OffsetAndMetadata> offsets, ToIntFunction<TopicPartition> key) {
            Map<Integer, Long> sorted = new TreeMap<>();
            offsets.forEach((partition, offset) -> sorted.put(key.applyAsInt(partition), offset.offset()));
            StringBuilder line = new StringBuilder();
            sorted.forEach((partition, offset) -> line.append(line.length() == 0 ? "" : " ").append(partition)
                    .append(' ').append(offset));
            ByteBuffer bytes = ByteBuffer.wrap(line.append('\n').toString().getBytes(StandardCharsets.US_ASCII));
            try {
                while (bytes.hasRemaining()) commits.write(bytes);
            } catch (IOException e) {
                throw new IllegalStateException("cannot append to commits.txt", e);
            }
        }
    }
}

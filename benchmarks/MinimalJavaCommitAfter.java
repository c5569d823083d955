import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

/**
 * A minimal hand-written consumer that commits after processing: the yardstick for a groups lab member (kafkabench's
 * Java delivery_consumer worker in mode commit-after). No kafkabench code.
 *
 *     java -cp KAFKA_JARS:. MinimalJavaCommitAfter BOOTSTRAP TOPIC GROUP BATCH COUNT
 *
 * A consumer of GROUP with max.poll.records=BATCH, auto.offset.reset=earliest, enable.auto.commit=false; client
 * defaults otherwise. Each poll that returned records is processed (the id's sequence read from bytes 6..13 of the
 * value and counted in an array), then its next offsets committed synchronously; until COUNT records are processed.
 * Prints one JSON line: records, commits, seconds (the first poll that returned records -> the last commit returned).
 */
public final class MinimalJavaCommitAfter {
    public static void main(String[] args) {
        String bootstrap = args[0], topic = args[1], group = args[2];
        int batch = Integer.parseInt(args[3]);
        int count = Integer.parseInt(args[4]);
        Properties props = new Properties();
        props.put("bootstrap.servers", bootstrap);
        props.put("group.id", group);
        props.put("max.poll.records", Integer.toString(batch));
        props.put("auto.offset.reset", "earliest");
        props.put("enable.auto.commit", "false");
        byte[] counts = new byte[count];
        long processed = 0, commits = 0, first = 0, last = 0;
        try (KafkaConsumer<byte[], byte[]> consumer =
                     new KafkaConsumer<>(props, new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
            consumer.subscribe(List.of(topic));
            while (processed < count) {
                ConsumerRecords<byte[], byte[]> records = consumer.poll(Duration.ofMillis(200));
                if (records.isEmpty()) continue;
                if (first == 0) first = System.nanoTime();
                Map<TopicPartition, OffsetAndMetadata> offsets = new HashMap<>();
                for (ConsumerRecord<byte[], byte[]> record : records) {
                    counts[(int) ByteBuffer.wrap(record.value(), 6, 8).getLong()]++;
                    offsets.put(new TopicPartition(record.topic(), record.partition()),
                            new OffsetAndMetadata(record.offset() + 1));
                }
                consumer.commitSync(offsets);
                last = System.nanoTime();
                processed += records.count();
                commits++;
            }
        }
        System.out.printf("{\"records\": %d, \"commits\": %d, \"seconds\": %.6f}%n", processed, commits,
                (last - first) / 1e9);
    }
}

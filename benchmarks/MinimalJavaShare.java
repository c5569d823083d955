import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.List;
import java.util.Properties;
import org.apache.kafka.clients.consumer.AcknowledgeType;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

/**
 * A minimal hand-written share consumer (KIP-932) that accepts each record after processing it: the yardstick for a
 * groups lab member of a share group (kafkabench's Java ShareMember). No kafkabench code.
 *
 *     java -cp KAFKA_JARS:. MinimalJavaShare BOOTSTRAP TOPIC GROUP BATCH COUNT
 *
 * A KafkaShareConsumer of GROUP with max.poll.records=BATCH and share.acknowledgement.mode=explicit (the group's
 * share.auto.offset.reset set to earliest beforehand by the caller); client defaults otherwise. Each poll's records
 * processed (the id's sequence read from bytes 6..13 of the value and counted in an array), each accepted, then the
 * acknowledgements committed synchronously; until COUNT records are processed. Prints one JSON line: records,
 * commits, seconds (the first poll that returned records -> the last commit returned).
 */
public final class MinimalJavaShare {
    public static void main(String[] args) {
        String bootstrap = args[0], topic = args[1], group = args[2];
        int batch = Integer.parseInt(args[3]);
        int count = Integer.parseInt(args[4]);
        Properties props = new Properties();
        props.put("bootstrap.servers", bootstrap);
        props.put("group.id", group);
        props.put("max.poll.records", Integer.toString(batch));
        props.put("share.acknowledgement.mode", "explicit");
        byte[] counts = new byte[count];
        long processed = 0, commits = 0, first = 0, last = 0;
        try (KafkaShareConsumer<byte[], byte[]> consumer =
                     new KafkaShareConsumer<>(props, new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
            consumer.subscribe(List.of(topic));
            while (processed < count) {
                ConsumerRecords<byte[], byte[]> records = consumer.poll(Duration.ofMillis(200));
                if (records.isEmpty()) continue;
                if (first == 0) first = System.nanoTime();
                for (ConsumerRecord<byte[], byte[]> record : records) {
                    counts[(int) ByteBuffer.wrap(record.value(), 6, 8).getLong()]++;
                    consumer.acknowledge(record, AcknowledgeType.ACCEPT);
                }
                consumer.commitSync();
                last = System.nanoTime();
                processed += records.count();
                commits++;
            }
        }
        System.out.printf("{\"records\": %d, \"commits\": %d, \"seconds\": %.6f}%n", processed, commits,
                (last - first) / 1e9);
    }
}

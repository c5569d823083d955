import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * A minimal hand-written transactional copier (consume, produce, commit offsets in the transaction): the yardstick
 * for kafkabench's Java delivery_consumer worker in mode copy. No kafkabench code.
 *
 *     java -cp KAFKA_JARS:. MinimalJavaCopier BOOTSTRAP INPUT_TOPIC OUTPUT_TOPIC GROUP TRANSACTIONAL_ID BATCH COUNT
 *
 * The worker's copy settings: a consumer of GROUP with max.poll.records=BATCH, auto.offset.reset=earliest,
 * enable.auto.commit=false, isolation.level=read_committed; a producer with TRANSACTIONAL_ID, acks=all and
 * idempotence; client defaults otherwise. initTransactions before the first poll. Each poll that returned records
 * is one transaction: every value sent unchanged (no key) to the same partition number of OUTPUT_TOPIC, the batch's
 * next offsets (last offset + 1 per partition) sent to the transaction with the consumer's group metadata, then
 * committed. No abort handling: an error ends the run (an exit code that is not 0). Copies until COUNT records are
 * in committed transactions (the last one stops at COUNT, its offsets with it); prints one JSON line: records
 * (copied), seconds (the first poll that returned records -> the last commit returned), transactions (committed).
 */
public final class MinimalJavaCopier {
    public static void main(String[] args) {
        String bootstrap = args[0], input = args[1], output = args[2], group = args[3], transactionalId = args[4];
        int batch = Integer.parseInt(args[5]);
        long count = Long.parseLong(args[6]);
        Properties consumerProps = new Properties();
        consumerProps.put("bootstrap.servers", bootstrap);
        consumerProps.put("group.id", group);
        consumerProps.put("max.poll.records", Integer.toString(batch));
        consumerProps.put("auto.offset.reset", "earliest");
        consumerProps.put("enable.auto.commit", "false");
        consumerProps.put("isolation.level", "read_committed");
        consumerProps.put("key.deserializer", ByteArrayDeserializer.class.getName());
        consumerProps.put("value.deserializer", ByteArrayDeserializer.class.getName());
        Properties producerProps = new Properties();
        producerProps.put("bootstrap.servers", bootstrap);
        producerProps.put("transactional.id", transactionalId);
        producerProps.put("acks", "all");
        producerProps.put("enable.idempotence", "true");
        producerProps.put("key.serializer", ByteArraySerializer.class.getName());
        producerProps.put("value.serializer", ByteArraySerializer.class.getName());
        for (int i = 7; i < args.length; i++) { // producer settings KEY=VALUE after the fixed arguments
            String[] pair = args[i].split("=", 2);
            producerProps.put(pair[0], pair[1]);
        }
        long copied = 0, transactions = 0, first = 0, last = 0;
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(consumerProps);
             KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(producerProps)) {
            producer.initTransactions();
            consumer.subscribe(List.of(input));
            while (copied < count) {
                ConsumerRecords<byte[], byte[]> records = consumer.poll(Duration.ofMillis(100));
                if (records.isEmpty()) continue;
                if (first == 0) first = System.nanoTime();
                producer.beginTransaction();
                Map<TopicPartition, OffsetAndMetadata> offsets = new HashMap<>();
                long inTransaction = 0;
                for (ConsumerRecord<byte[], byte[]> record : records) {
                    if (copied + inTransaction == count) break; // the offsets stop where the copies do
                    producer.send(new ProducerRecord<>(output, record.partition(), null, record.value()));
                    offsets.put(new TopicPartition(record.topic(), record.partition()),
                            new OffsetAndMetadata(record.offset() + 1, record.leaderEpoch(), ""));
                    inTransaction++;
                }
                producer.sendOffsetsToTransaction(offsets, consumer.groupMetadata());
                producer.commitTransaction();
                last = System.nanoTime();
                copied += inTransaction;
                transactions++;
            }
        }
        System.out.printf("{\"records\": %d, \"seconds\": %.6f, \"transactions\": %d}%n", copied, (last - first) / 1e9,
                transactions);
    }
}

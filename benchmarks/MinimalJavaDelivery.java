import java.nio.ByteBuffer;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * A minimal hand-written Java-client loop that knows where every message went: the yardstick for kafkabench's
 * Java delivery worker (async-close). No kafkabench code.
 *
 *     java -cp KAFKA_JARS:. MinimalJavaDelivery BOOTSTRAP TOPIC SIZE COUNT
 *
 * Message i's value is an id ("kbd1", producer 0 as uint16, i as uint64, big-endian) padded to SIZE bytes;
 * acks=1, client defaults otherwise. The topic's metadata is fetched before the clock starts. Each send's callback stores the partition and offset of message i in
 * preallocated arrays (or counts the error); then flush. Prints one JSON line: records (acknowledged), errors,
 * seconds (first send -> flush returned).
 */
public final class MinimalJavaDelivery {
    public static void main(String[] args) {
        String bootstrap = args[0], topic = args[1];
        int size = Integer.parseInt(args[2]), count = Integer.parseInt(args[3]);
        Properties props = new Properties();
        props.put("bootstrap.servers", bootstrap);
        props.put("acks", "1");
        props.put("key.serializer", ByteArraySerializer.class.getName());
        props.put("value.serializer", ByteArraySerializer.class.getName());
        int[] partitions = new int[count];
        long[] offsets = new long[count];
        AtomicLong acked = new AtomicLong(), failed = new AtomicLong();
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(props)) {
            producer.partitionsFor(topic); // metadata first, as kafkabench's worker fetches it before it is ready
            long start = System.nanoTime();
            for (int i = 0; i < count; i++) {
                byte[] value = ByteBuffer.allocate(size).put("kbd1".getBytes()).putShort((short) 0).putLong(i).array();
                final int sequence = i;
                producer.send(new ProducerRecord<>(topic, value), (metadata, exception) -> {
                    if (exception == null) {
                        partitions[sequence] = metadata.partition();
                        offsets[sequence] = metadata.offset();
                        acked.incrementAndGet();
                    } else {
                        failed.incrementAndGet();
                    }
                });
            }
            producer.flush();
            double seconds = (System.nanoTime() - start) / 1e9;
            System.out.printf("{\"records\": %d, \"errors\": %d, \"seconds\": %.6f}%n", acked.get(), failed.get(), seconds);
        }
    }
}

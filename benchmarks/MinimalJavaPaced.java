import com.sun.management.OperatingSystemMXBean;
import java.lang.management.ManagementFactory;
import java.util.Arrays;
import java.util.Properties;
import java.util.Random;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * A minimal hand-written paced Java-client producer, the yardstick for kafkabench's Java open-loop producer.
 * No kafkabench code.
 *
 *     java -cp KAFKA_JARS:. MinimalJavaPaced BOOTSTRAP TOPIC SIZE COUNT RATE
 *
 * COUNT records of one SIZE-byte random value, client defaults. Record i is due at start + i / RATE; the loop
 * parks until then, sends, and notes due -> send call (delay); each send's callback notes send call -> callback
 * (latency) in a preallocated array. Then flush. Prints one JSON line as minimal_common.print_paced: records,
 * errors, seconds, records_per_s, latency_us and delay_us p50/p99 (nearest rank), cpu_s (the whole JVM, from
 * the first send to the flush's return).
 */
public final class MinimalJavaPaced {
    public static void main(String[] args) {
        String bootstrap = args[0], topic = args[1];
        int size = Integer.parseInt(args[2]), count = Integer.parseInt(args[3]);
        double rate = Double.parseDouble(args[4]);
        Properties props = new Properties();
        props.put("bootstrap.servers", bootstrap);
        props.put("key.serializer", ByteArraySerializer.class.getName());
        props.put("value.serializer", ByteArraySerializer.class.getName());
        byte[] value = new byte[size];
        new Random().nextBytes(value);
        double[] latencies = new double[count], delays = new double[count];
        AtomicLong acked = new AtomicLong(), failed = new AtomicLong();
        var os = (OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
        long start, cpu, end;
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(props)) {
            producer.partitionsFor(topic); // metadata first, as kafkabench's worker has it before it starts
            cpu = os.getProcessCpuTime();
            start = System.nanoTime();
            for (int i = 0; i < count; i++) {
                long due = start + Math.round(i * 1e9 / rate);
                for (long ahead = due - System.nanoTime(); ahead > 0; ahead = due - System.nanoTime()) {
                    LockSupport.parkNanos(ahead);
                }
                long sent = System.nanoTime();
                delays[i] = (sent - due) / 1e3;
                final int sequence = i;
                producer.send(new ProducerRecord<>(topic, value), (metadata, exception) -> {
                    if (exception == null) {
                        latencies[sequence] = (System.nanoTime() - sent) / 1e3;
                        acked.incrementAndGet();
                    } else {
                        failed.incrementAndGet();
                    }
                });
            }
            producer.flush();
            end = System.nanoTime();
            cpu = os.getProcessCpuTime() - cpu;
        }
        double seconds = (end - start) / 1e9;
        System.out.printf("{\"records\": %d, \"errors\": %d, \"seconds\": %.6f, \"records_per_s\": %.1f, "
                + "\"latency_us\": {\"p50\": %.1f, \"p99\": %.1f}, \"delay_us\": {\"p50\": %.1f, \"p99\": %.1f}, "
                + "\"cpu_s\": %.3f}%n", acked.get(), failed.get(), seconds, acked.get() / seconds,
                rank(latencies, acked.get(), 0.50), rank(latencies, acked.get(), 0.99),
                rank(delays, count, 0.50), rank(delays, count, 0.99), cpu / 1e9);
    }

    /** Nearest rank over the first `n` values once sorted (the failed sends' zero latencies sort first: none here). */
    private static double rank(double[] values, long n, double q) {
        double[] sorted = values.clone();
        Arrays.sort(sorted);
        int skip = sorted.length - (int) n;
        int r = (int) Math.min(n, Math.max(1, Math.ceil(q * n - 1e-9)));
        return n == 0 ? 0 : sorted[skip + r - 1];
    }
}

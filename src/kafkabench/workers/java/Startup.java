package kafkabench;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.common.PartitionInfo;
import kafkabench.KafkabenchWorker.WorkerFailure;

/** What the streaming scenarios (produce, consume, delivery) do before their measured part. */
final class Startup {
    private Startup() {
    }

    /** What the orchestrator said after `ready`. */
    enum Signal {
        START, FINISH, GONE; // FINISH: stopped before it started, an empty result; GONE: stdin ended

        static Signal of(JsonNode message) throws WorkerFailure {
            if (message == Inbox.END) return GONE;
            String type = message.path("type").asText();
            if (type.equals("finish")) return FINISH;
            if (!type.equals("start")) throw new WorkerFailure("config", "expected 'start', got '" + type + "'");
            return START;
        }
    }

    /** partitionsFor waits up to max.block.ms; the task's timeout bounds it here. */
    static void awaitMetadata(KafkaProducer<byte[], byte[]> producer, String topic, long timeoutNs) throws WorkerFailure {
        CompletableFuture<List<PartitionInfo>> lookup = CompletableFuture.supplyAsync(() -> producer.partitionsFor(topic));
        try {
            if (lookup.get(timeoutNs, TimeUnit.NANOSECONDS).isEmpty()) {
                throw new WorkerFailure("failure", "topic " + topic + " has no partitions (does it exist?)");
            }
        } catch (java.util.concurrent.TimeoutException | InterruptedException e) {
            throw new WorkerFailure("timeout", "no metadata for topic " + topic + " within "
                    + KafkabenchWorker.seconds(timeoutNs / 1e9) + " s; does the topic exist and is the cluster reachable?");
        } catch (ExecutionException e) {
            WorkerFailure cause = KafkabenchWorker.asFailure(e.getCause() instanceof Exception ex ? ex : e);
            throw new WorkerFailure(cause.kind, "metadata for topic " + topic + ": " + cause.getMessage());
        }
    }
}

package kafkabench.cluster;

import java.util.Arrays;

/**
 * An embedded cluster's node: formats its own storage (Kafka's StorageTool, with --ignore-formatted, so a restart
 * finds it done), then runs the broker or controller (kafka.Kafka) in the same JVM. A separate formatter's JVM
 * costs every node most of a second of CPU before it starts; this one's classes are mostly the node's own.
 *
 * Arguments: the StorageTool's, then "--", then kafka.Kafka's.
 */
public final class KafkabenchNode {
    private KafkabenchNode() {
    }

    public static void main(String[] args) throws Exception {
        int split = Arrays.asList(args).indexOf("--");
        if (split < 0) {
            System.out.println("Error: KafkabenchNode takes the StorageTool's arguments, \"--\", then kafka.Kafka's");
            System.exit(2);
        }
        int formatted;
        try {
            formatted = kafka.tools.StorageTool.execute(Arrays.copyOfRange(args, 0, split), System.out);
        } catch (Exception e) {
            System.out.println("Error: formatting the storage failed: " + e.getMessage());
            formatted = 1;
        }
        System.out.flush();
        if (formatted != 0) {
            System.exit(formatted);
        }
        kafka.Kafka.main(Arrays.copyOfRange(args, split + 1, args.length));
    }
}

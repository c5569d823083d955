package kafkabench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.PrintStream;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.OptionalInt;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.common.errors.TimeoutException;

/**
 * The official Java client's worker: speaks kafkabench's JSON-lines protocol (kafkabench/core/protocol.py)
 * on stdin/stdout and runs one scenario natively (PingPong, Produce, Consume, Delivery). Stdout carries
 * protocol messages only.
 */
public final class KafkabenchWorker {
    // First in the class: logging defaults to stdout and starts with the first Kafka class loaded (VERSION
    // below), so stdout is handed over to stderr before that and kept for the protocol alone.
    static final PrintStream PROTOCOL_OUT = System.out;

    static {
        System.setOut(System.err);
    }

    static final ObjectMapper JSON = new ObjectMapper();
    static final String VERSION = clientVersion();

    /** The kafka-clients version, as its jar says it (AppInfoParser, which reads the same file, moved in 4.4). */
    static String clientVersion() {
        java.util.Properties properties = new java.util.Properties();
        try (java.io.InputStream in = KafkabenchWorker.class.getResourceAsStream("/kafka/kafka-version.properties")) {
            if (in != null) {
                properties.load(in);
            }
        } catch (java.io.IOException e) {
            return "unknown";
        }
        return properties.getProperty("version", "unknown");
    }

    /** One scenario of one task. It sends its own `ready` and `progress`; the worker sends the result. */
    interface Scenario {
        /** Runs until a result is due (true) or stdin ended first and nobody is left to tell (false). */
        boolean run(Inbox inbox) throws Exception;

        /** What was measured so far: the result's body, or the partial outcome of an error. */
        Map<String, Object> outcome();

        /** After the result: nothing may follow it on stdout, so a failure here is only logged. */
        void close();

        /** After close(): whether the worker then exits, ending every thread the scenario left (false: main
         *  returns, and the JVM ends when the last non-daemon thread does, or never). */
        default boolean exitsWhenDone() {
            return true;
        }
    }

    /** A failure worth one `error` message; kind is failure | integrity | config | timeout. */
    static final class WorkerFailure extends Exception {
        private static final long serialVersionUID = 1L;
        final String kind;

        WorkerFailure(String kind, String message) {
            super(message);
            this.kind = kind;
        }
    }

    private KafkabenchWorker() {
    }

    public static void main(String[] args) throws Exception {
        if (Arrays.asList(args).contains("--describe")) {
            PROTOCOL_OUT.println(JSON.writeValueAsString(ClientConfigs.describe()));
        } else if (Arrays.asList(args).contains("--encode-fixture")) {
            PROTOCOL_OUT.println(JSON.writeValueAsString(LatencyMetric.encodeFixture(System.in)));
        } else {
            // exit() also ends the clients' non-daemon threads when a failure left a client open; a scenario
            // that leaves its client open on purpose (delivery async-return) has no exit code, and main returns.
            OptionalInt code = serve(new Inbox(System.in));
            if (code.isPresent()) System.exit(code.getAsInt());
        }
    }

    /** Reads the task, runs its scenario and reports; returns the exit code, none when the scenario does not
     *  want the worker to exit. */
    static OptionalInt serve(Inbox inbox) {
        Scenario scenario = null;
        try {
            JsonNode task = inbox.take();
            if (task == Inbox.END) return OptionalInt.of(0);
            scenario = scenarioFor(task);
            if (!scenario.run(inbox)) {
                System.err.println("stdin closed before finish; exiting");
                return OptionalInt.of(0);
            }
            Map<String, Object> result = new LinkedHashMap<>();
            result.put("type", "result");
            result.putAll(scenario.outcome());
            send(result);
            scenario.close();
            return scenario.exitsWhenDone() ? OptionalInt.of(0) : OptionalInt.empty();
        } catch (Exception e) {
            WorkerFailure failure = asFailure(e);
            Map<String, Object> error = new LinkedHashMap<>();
            error.put("type", "error");
            error.put("message", failure.getMessage());
            error.put("kind", failure.kind);
            error.put("partial", scenario == null ? null : scenario.outcome());
            send(error);
            return OptionalInt.of(1);
        }
    }

    private static Scenario scenarioFor(JsonNode task) throws WorkerFailure {
        String scenario = task.path("scenario").asText();
        if (task.path("type").asText().equals("task") && task.path("protocol").asInt(1) == 1) {
            switch (scenario) {
                case "ping_pong": return new PingPong(task);
                case "produce": return new Produce(task);
                case "consume": return new Consume(task);
                case "delivery": return new Delivery(task);
                case "delivery_consumer":
                    DeliveryConsumer consumer = new DeliveryConsumer(task);
                    return consumer.mode.equals("share") ? new ShareMember(consumer) : consumer;
                default: break;
            }
        }
        throw new WorkerFailure("config", String.format("the java worker runs protocol 1 ping_pong, produce, consume, "
                + "delivery and delivery_consumer tasks, got %s (protocol %d, scenario %s)", task.path("type").asText(),
                task.path("protocol").asInt(1), scenario));
    }

    static WorkerFailure asFailure(Exception e) {
        if (e instanceof WorkerFailure failure) return failure;
        e.printStackTrace();
        String kind = e instanceof ConfigException ? "config" : e instanceof TimeoutException ? "timeout" : "failure";
        return new WorkerFailure(kind, e.getClass().getSimpleName() + ": " + e.getMessage());
    }

    /** Writes one protocol message; synchronized so that no two lines ever interleave. */
    static synchronized void send(Map<String, Object> message) {
        try {
            PROTOCOL_OUT.println(JSON.writeValueAsString(message));
            PROTOCOL_OUT.flush();
        } catch (Exception e) {
            throw new IllegalStateException("cannot write a protocol message", e);
        }
    }

    static void sendReady() {
        send(Map.of("type", "ready", "client_version", VERSION));
    }

    /** Seconds as people write them in messages: "30", "2.5". */
    static String seconds(double seconds) {
        return seconds == Math.rint(seconds) ? Long.toString((long) seconds) : Double.toString(seconds);
    }
}

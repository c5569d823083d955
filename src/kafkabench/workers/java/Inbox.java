package kafkabench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;

/**
 * The orchestrator's messages, read from stdin by a daemon thread: a scenario busy sending or polling
 * notices `finish` at once instead of when it next reads. The end of stdin counts as a finish too, since
 * nobody is left to send one.
 */
final class Inbox {
    /** Returned, from then on, once stdin has ended. */
    static final JsonNode END = KafkabenchWorker.JSON.createObjectNode().put("type", "end of input");

    private final BlockingQueue<JsonNode> messages = new LinkedBlockingQueue<>();
    private volatile boolean finishRequested;
    private volatile Runnable onArrival = () -> { };

    Inbox(InputStream in) {
        var reader = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8));
        Thread thread = new Thread(() -> readAll(reader), "kafkabench-stdin");
        thread.setDaemon(true);
        thread.start();
    }

    /** Runs in the reader thread after each message, e.g. to wake a consumer blocked in poll(). */
    void onArrival(Runnable action) {
        onArrival = action;
    }

    boolean finishRequested() {
        return finishRequested;
    }

    /** The next message, waiting as long as it takes (END once stdin has ended). */
    JsonNode take() throws InterruptedException {
        return keepEnd(messages.take());
    }

    /** The next message, or null when none has arrived. */
    JsonNode poll() {
        JsonNode message = messages.poll();
        return message == null ? null : keepEnd(message);
    }

    private JsonNode keepEnd(JsonNode message) {
        if (message == END) messages.add(END);
        return message;
    }

    private void readAll(BufferedReader reader) {
        try {
            for (String line = reader.readLine(); line != null; line = reader.readLine()) {
                if (!line.isBlank()) deliver(parse(line));
            }
        } catch (IOException e) {
            System.err.println("reading stdin failed: " + e);
        }
        deliver(END);
    }

    /** A line that is no JSON becomes a message of an unknown type, which the scenario then rejects. */
    private static JsonNode parse(String line) {
        try {
            return KafkabenchWorker.JSON.readTree(line);
        } catch (IOException e) {
            ObjectNode unreadable = KafkabenchWorker.JSON.createObjectNode();
            return unreadable.put("type", "unreadable: " + line.substring(0, Math.min(line.length(), 60)));
        }
    }

    private void deliver(JsonNode message) {
        if (message == END || message.path("type").asText().equals("finish")) finishRequested = true;
        messages.add(message);
        onArrival.run();
    }
}

package kafkabench;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.Locale;
import kafkabench.KafkabenchWorker.WorkerFailure;

/** The values a task sends (`payload_files`) and their declared sha256 digests (`payload_sha256s`). */
final class Payloads {
    private Payloads() {
    }

    static byte[][] read(JsonNode task) throws WorkerFailure {
        JsonNode files = task.path("payload_files");
        if (files.size() == 0) throw new WorkerFailure("config", "the task names no payload_files");
        byte[][] payloads = new byte[files.size()][];
        for (int i = 0; i < payloads.length; i++) {
            try {
                payloads[i] = Files.readAllBytes(Path.of(files.get(i).asText()));
            } catch (IOException e) {
                throw new WorkerFailure("config", "cannot read payload file " + files.get(i).asText() + ": " + e);
            }
        }
        return payloads;
    }

    /** The declared digests, lower-case hex. */
    static String[] sha256s(JsonNode task) {
        JsonNode declared = task.path("payload_sha256s");
        String[] digests = new String[declared.size()];
        for (int i = 0; i < digests.length; i++) digests[i] = declared.get(i).asText().toLowerCase(Locale.ROOT);
        return digests;
    }

    static MessageDigest newSha256() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e); // every Java runtime provides SHA-256
        }
    }

    static String sha256(byte[] data) {
        return HexFormat.of().formatHex(newSha256().digest(data));
    }
}

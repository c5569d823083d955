package kafkabench;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import kafkabench.KafkabenchWorker.WorkerFailure;

/** A task's scenario `params`, typed; a value of the wrong type is a config error naming it. */
final class Params {
    /** For durations that are not set: longer than any run. */
    static final long NEVER = Long.MAX_VALUE;

    private final JsonNode params;
    private final String scenario;

    Params(JsonNode task) {
        this.params = task.path("params");
        this.scenario = task.path("scenario").asText();
    }

    /** An integer, or null when absent or null. */
    Long count(String name) throws WorkerFailure {
        JsonNode value = params.path(name);
        if (value.isMissingNode() || value.isNull()) return null;
        if (!value.isIntegralNumber() || !value.canConvertToLong() || value.asLong() < 0) throw invalid(name, "a count");
        return value.asLong();
    }

    /** An object of partition number -> offset, or null when absent or null. */
    /** A list of partition numbers, or null when absent or null. */
    int[] partitions(String name) throws WorkerFailure {
        JsonNode value = params.path(name);
        if (value.isMissingNode() || value.isNull()) return null;
        if (!value.isArray() || value.isEmpty()) throw invalid(name, "a non-empty list of partition numbers");
        int[] partitions = new int[value.size()];
        for (int i = 0; i < partitions.length; i++) {
            JsonNode partition = value.get(i);
            if (!partition.canConvertToInt() || !partition.isIntegralNumber() || partition.asInt() < 0) {
                throw invalid(name, "a non-empty list of partition numbers");
            }
            partitions[i] = partition.asInt();
        }
        return partitions;
    }

    /** A non-empty list of names, or `fallback` alone when absent or null. */
    String[] names(String name, String fallback) throws WorkerFailure {
        JsonNode value = params.path(name);
        if (value.isMissingNode() || value.isNull()) return new String[] {fallback};
        if (!value.isArray() || value.isEmpty()) throw invalid(name, "a non-empty list of names");
        String[] names = new String[value.size()];
        for (int i = 0; i < names.length; i++) {
            JsonNode item = value.get(i);
            if (!item.isTextual() || item.asText().isEmpty()) throw invalid(name, "a non-empty list of names");
            names[i] = value.get(i).asText();
        }
        return names;
    }

    Map<Integer, Long> offsets(String name) throws WorkerFailure {
        JsonNode value = params.path(name);
        if (value.isMissingNode() || value.isNull()) return null;
        if (!value.isObject()) throw invalid(name, "an object of partition -> offset");
        Map<Integer, Long> offsets = new HashMap<>();
        for (Iterator<Map.Entry<String, JsonNode>> it = value.fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> entry = it.next();
            try {
                JsonNode offset = entry.getValue();
                if (!offset.isIntegralNumber() || offset.asLong() < 0) throw new NumberFormatException();
                offsets.put(Integer.parseInt(entry.getKey()), offset.asLong());
            } catch (NumberFormatException e) {
                throw invalid(name, "an object of partition -> offset");
            }
        }
        return offsets;
    }

    double number(String name, double fallback) throws WorkerFailure {
        JsonNode value = params.path(name);
        if (value.isMissingNode() || value.isNull()) return fallback;
        if (!value.isNumber()) throw invalid(name, "a number");
        return value.asDouble();
    }

    /** Seconds as nanoseconds; NEVER when absent or null. */
    long nanos(String name) throws WorkerFailure {
        double seconds = number(name, Double.NaN);
        if (Double.isNaN(seconds)) return NEVER;
        if (seconds <= 0) throw invalid(name, "a number of seconds > 0");
        return (long) (seconds * 1e9);
    }

    boolean flag(String name) throws WorkerFailure {
        JsonNode value = params.path(name);
        if (value.isMissingNode() || value.isNull()) return false;
        if (!value.isBoolean()) throw invalid(name, "true or false");
        return value.asBoolean();
    }

    String text(String name, String... allowed) throws WorkerFailure {
        JsonNode value = params.path(name);
        if (!value.isTextual() || value.asText().isEmpty()) throw invalid(name, "a string");
        if (allowed.length > 0 && !List.of(allowed).contains(value.asText())) {
            throw invalid(name, "one of " + String.join(", ", allowed));
        }
        return value.asText();
    }

    /** A non-empty string, or null when absent or null. */
    String optionalText(String name) throws WorkerFailure {
        JsonNode value = params.path(name);
        if (value.isMissingNode() || value.isNull()) return null;
        if (!value.isTextual() || value.asText().isEmpty()) throw invalid(name, "a non-empty string");
        return value.asText();
    }

    /** Refuses a parameter not among `names`, as the Python model (extra="forbid") does. */
    void only(String... names) throws WorkerFailure {
        for (Iterator<String> it = params.fieldNames(); it.hasNext(); ) {
            String name = it.next();
            if (!List.of(names).contains(name)) throw refused("params." + name + " is not a parameter of " + scenario);
        }
    }

    /** A combination of parameters the scenario refuses, in words naming them. */
    WorkerFailure refused(String reason) {
        return new WorkerFailure("config", scenario + ": " + reason);
    }

    WorkerFailure invalid(String name, String expected) {
        return new WorkerFailure("config", String.format("%s: params.%s must be %s, got %s", scenario, name, expected,
                params.path(name)));
    }
}

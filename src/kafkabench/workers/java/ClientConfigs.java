package kafkabench;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.stream.Collectors;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.storage.internals.log.LogConfig;

/** The clients' settings: from a task to Properties, back as effective values, and the whole vocabulary. */
final class ClientConfigs {
    private ClientConfigs() {
    }

    static Properties producer(JsonNode task) {
        Properties props = properties(task.path("producer_config"), task.path("bootstrap_servers").asText(), "producer");
        props.put("key.serializer", ByteArraySerializer.class.getName());
        props.put("value.serializer", ByteArraySerializer.class.getName());
        return props;
    }

    static Properties consumer(JsonNode task) {
        Properties props = properties(task.path("consumer_config"), task.path("bootstrap_servers").asText(), "consumer");
        props.put("key.deserializer", ByteArrayDeserializer.class.getName());
        props.put("value.deserializer", ByteArrayDeserializer.class.getName());
        return props;
    }

    private static Properties properties(JsonNode config, String bootstrap, String role) {
        Properties props = new Properties();
        for (Map.Entry<String, JsonNode> e : config.properties()) {
            props.put(e.getKey(), e.getValue().isValueNode() ? e.getValue().asText() : e.getValue().toString());
        }
        props.put("bootstrap.servers", bootstrap);
        // A fixed id: otherwise the parsed copy and the client each draw a different "producer-N".
        props.putIfAbsent("client.id", "kafkabench-java-" + role);
        return props;
    }

    // The clients parse the same Properties into these same classes, so values() is what they use.
    static Map<String, Object> effectiveProducer(Properties props) {
        return render(new ProducerConfig(props).values());
    }

    static Map<String, Object> effectiveConsumer(Properties props) {
        return render(new ConsumerConfig(props).values());
    }

    /** Config values as strings: classes by name, lists comma-joined, passwords as Kafka prints them. */
    static Map<String, Object> render(Map<String, ?> values) {
        Map<String, Object> rendered = new TreeMap<>();
        values.forEach((name, value) -> rendered.put(name, render(value)));
        return rendered;
    }

    static String render(Object value) {
        if (value == null) return null;
        if (value instanceof Class<?> type) return type.getName();
        if (value instanceof List<?> list) {
            return list.stream().map(ClientConfigs::render).collect(Collectors.joining(","));
        }
        return value.toString(); // Password.toString() is "[hidden]"
    }

    /** Every setting's default (null when it has none) and type, for the Python side's name checks. */
    static Map<String, Object> describe() {
        Map<String, Object> described = new LinkedHashMap<>();
        described.put("client_version", KafkabenchWorker.VERSION);
        described.put("producer", defaults(ProducerConfig.configDef(), ProducerConfig.configNames()));
        described.put("consumer", defaults(ConsumerConfig.configDef(), ConsumerConfig.configNames()));
        described.put("admin", defaults(AdminClientConfig.configDef(), AdminClientConfig.configNames()));
        // Topic-level names as the broker validates them; its internal (test-only) settings are left out.
        described.put("topic", defaults(LogConfig.configDefCopy(), LogConfig.nonInternalConfigNames()));
        described.put("types", Map.of("producer", types(ProducerConfig.configDef()),
                "consumer", types(ConsumerConfig.configDef())));
        return described;
    }

    private static Map<String, Object> defaults(ConfigDef def, Collection<String> names) {
        Map<String, Object> defaults = def.defaultValues();
        Map<String, Object> rendered = new TreeMap<>();
        names.forEach(name -> rendered.put(name, render(defaults.get(name))));
        return rendered;
    }

    private static Map<String, String> types(ConfigDef def) {
        Map<String, String> types = new TreeMap<>();
        def.configKeys().forEach((name, key) -> types.put(name, key.type.name()));
        return types;
    }
}

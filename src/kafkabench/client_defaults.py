"""`kafkabench clients`: each installed client's version and its defaults for the settings that decide
latency, read from the libraries themselves (seed 000's comparison table, generated).

- Java: the pinned kafka-clients' ConfigDef, via the Java worker's `--describe` (or the JSON generated from it).
- confluent: librdkafka's own `rd_kafka_conf_dump()` through ctypes on the library the wheel bundles.
- kafka-python: KafkaProducer/KafkaConsumer.DEFAULT_CONFIG. aiokafka: its constructors' keyword defaults.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass, field
from importlib.util import find_spec

from kafkabench.config import java_names
from kafkabench.config.librdkafka import LIBRDKAFKA_NAMES
from kafkabench.config.librdkafka import conf_dump as librdkafka_dump  # shared with the `librdkafka:` settings check
from kafkabench.config.translate import AIOKAFKA_NAMES

LATENCY_SETTINGS = {
    "producer": ["acks", "linger.ms", "batch.size", "enable.idempotence", "max.in.flight.requests.per.connection",
                 "compression.type", "max.request.size", "request.timeout.ms", "delivery.timeout.ms", "retries",
                 "retry.backoff.ms", "send.buffer.bytes", "receive.buffer.bytes"],
    "consumer": ["fetch.max.wait.ms", "fetch.min.bytes", "fetch.max.bytes", "max.partition.fetch.bytes",
                 "max.poll.records", "auto.offset.reset", "enable.auto.commit", "isolation.level", "check.crcs",
                 "session.timeout.ms", "heartbeat.interval.ms", "receive.buffer.bytes", "send.buffer.bytes"],
}

# librdkafka's dump lists canonical names; these Java names are aliases there (names only: values come from the dump)
LIBRDKAFKA_CANONICAL = {
    "linger.ms": "queue.buffering.max.ms",
    "max.partition.fetch.bytes": "fetch.message.max.bytes",
    "acks": "request.required.acks",
    "retries": "message.send.max.retries",
    "delivery.timeout.ms": "message.timeout.ms",
    "compression.type": "compression.codec",
}

NOT_A_SETTING = "n/a"


@dataclass
class ClientDefaults:
    client: str
    version: str
    source: str  # where the values were read
    values: dict[str, dict[str, str]] = field(default_factory=dict)  # role -> Java name -> default


def _text(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return str(value).lower()
    if type(value) is object:  # a sentinel: the library picks the value at run time (aiokafka's acks)
        return "at run time"
    return str(value)


def java_defaults() -> ClientDefaults:
    source = "kafka-clients ConfigDef (generated JSON)"
    data = {role: {name: java_names.default(role, name) for name in java_names.names(role)} for role in LATENCY_SETTINGS}
    version = java_names.java_client_version()
    try:
        from kafkabench.cluster.artifacts import JarCache
        from kafkabench.cluster.java import find_java
        from kafkabench.workers.java_build import describe_java_client

        java = find_java()
        if java.javac is not None:
            described = describe_java_client(java, JarCache().ensure())
            data = {role: described[role] for role in LATENCY_SETTINGS}
            version, source = described["client_version"], "kafka-clients ConfigDef (live, --describe)"
    except Exception:  # no JDK or no network: the JSON generated from the same jar still answers
        pass
    return _pick("java", version, source, lambda role, name: data[role][name] if name in data[role] else NOT_A_SETTING)


def confluent_defaults() -> ClientDefaults:
    import confluent_kafka

    dump = librdkafka_dump()

    def lookup(_role: str, name: str) -> str:
        for candidate in (LIBRDKAFKA_CANONICAL.get(name), LIBRDKAFKA_NAMES.get(name), name):
            if candidate and candidate in dump:
                return dump[candidate]
        return NOT_A_SETTING

    version = f"{confluent_kafka.__version__} (librdkafka {confluent_kafka.libversion()[0]})"
    return _pick("confluent", version, "librdkafka rd_kafka_conf_dump()", lookup)


def default_of(client: str, role: str, name: str) -> str | None:
    """One setting's default as the client has it: a Java name, or a `librdkafka:` name for confluent; None where
    the client has no such setting (kafka-python and aiokafka: only the LATENCY_SETTINGS are read)."""
    from kafkabench.config import native

    if client == "java":
        return java_names.default(role, name)
    if client in ("kafka-python", "aiokafka"):
        value = READERS[client][0]().values.get(role, {}).get(name)
        return None if value in (None, NOT_A_SETTING) else value
    if client != "confluent":
        return None
    dump = librdkafka_dump()
    form, own = native.split(name)
    candidates = [own] if form is not None else [LIBRDKAFKA_CANONICAL.get(name), LIBRDKAFKA_NAMES.get(name), name]
    value = next((dump[c] for c in candidates if c and c in dump), None)
    # the topic-level codec's `inherit` is the global compression.codec, whose default is none
    return "none" if name == "compression.type" and value == "inherit" else value


def kafka_python_defaults() -> ClientDefaults:
    from kafka import KafkaConsumer, KafkaProducer

    configs = {"producer": KafkaProducer.DEFAULT_CONFIG, "consumer": KafkaConsumer.DEFAULT_CONFIG}

    def lookup(role: str, name: str) -> str:
        key = name.replace(".", "_")
        return _text(configs[role][key]) if key in configs[role] else NOT_A_SETTING

    from kafkabench.workers.adapters.kafka_python import Adapter

    return _pick("kafka-python", Adapter().version(), "KafkaProducer/KafkaConsumer.DEFAULT_CONFIG", lookup)


def aiokafka_defaults() -> ClientDefaults:
    import aiokafka
    from aiokafka import AIOKafkaConsumer, AIOKafkaProducer

    signatures = {role: inspect.signature(cls.__init__).parameters
                  for role, cls in (("producer", AIOKafkaProducer), ("consumer", AIOKafkaConsumer))}

    def lookup(role: str, name: str) -> str:
        key = AIOKAFKA_NAMES.get(name, name.replace(".", "_"))
        parameter = signatures[role].get(key)
        return _text(parameter.default) if parameter is not None else NOT_A_SETTING

    return _pick("aiokafka", aiokafka.__version__, "AIOKafkaProducer/AIOKafkaConsumer keyword defaults", lookup)


def _pick(client: str, version: str, source: str, lookup) -> ClientDefaults:
    values = {role: {name: _text(lookup(role, name)) for name in names} for role, names in LATENCY_SETTINGS.items()}
    return ClientDefaults(client, version, source, values)


READERS = {"confluent": (confluent_defaults, "confluent_kafka"), "kafka-python": (kafka_python_defaults, "kafka"),
           "aiokafka": (aiokafka_defaults, "aiokafka"), "java": (java_defaults, None)}


def installed_client_defaults() -> list[ClientDefaults]:
    return [reader() for reader, library in READERS.values() if library is None or find_spec(library) is not None]

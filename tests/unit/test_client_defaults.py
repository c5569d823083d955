"""Defaults are read from the libraries: spot-check values each library documents as its default."""

from kafkabench.client_defaults import (
    LATENCY_SETTINGS, NOT_A_SETTING, aiokafka_defaults, confluent_defaults, kafka_python_defaults, librdkafka_dump,
)


def test_librdkafka_dump_comes_from_the_library():
    dump = librdkafka_dump()
    assert dump["queue.buffering.max.ms"] == "5"  # librdkafka's linger default since 1.5
    assert dump["fetch.wait.max.ms"] == "500"
    assert "request.required.acks" in dump  # a topic-level setting: the topic conf was dumped too


def test_confluent_maps_java_names_onto_librdkafka():
    defaults = confluent_defaults()
    producer, consumer = defaults.values["producer"], defaults.values["consumer"]
    assert producer["linger.ms"] == "5"
    assert producer["acks"] == "-1"
    assert producer["max.request.size"] == librdkafka_dump()["message.max.bytes"]
    assert consumer["max.partition.fetch.bytes"] == "1048576"
    assert defaults.version.startswith(__import__("confluent_kafka").__version__)


def test_python_clients():
    kp, aio = kafka_python_defaults(), aiokafka_defaults()
    assert kp.values["consumer"]["fetch.max.wait.ms"] == "500"
    assert kp.values["producer"]["linger.ms"] == "0"
    assert aio.values["producer"]["batch.size"] == "16384"  # aiokafka calls it max_batch_size
    assert aio.values["producer"]["max.in.flight.requests.per.connection"] == NOT_A_SETTING
    for defaults in (kp, aio):
        assert set(defaults.values) == set(LATENCY_SETTINGS)
        assert all(set(defaults.values[role]) == set(names) for role, names in LATENCY_SETTINGS.items())


def test_the_clients_tables_fit_100_columns():
    """`kafkabench clients`: four clients side by side, a table per role, within 100 columns (Java's defaults as the
    JSON generated from its jar has them, without starting a JVM)."""
    from rich.console import Console

    from kafkabench.cli.clients import defaults_table
    from kafkabench.client_defaults import ClientDefaults, _pick
    from kafkabench.config import java_names

    java = _pick("java", "4.1.2", "test", lambda role, name: java_names.default(role, name) or NOT_A_SETTING)
    found: list[ClientDefaults] = [confluent_defaults(), kafka_python_defaults(), aiokafka_defaults(), java]
    widths = {role: Console(width=10_000).measure(defaults_table(role, names, found)).maximum
              for role, names in LATENCY_SETTINGS.items()}
    assert max(widths.values()) <= 100, widths

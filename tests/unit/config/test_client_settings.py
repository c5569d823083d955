import pytest

from kafkabench.config.client_settings import RECORD_OVERHEAD, bootstrap_from, build_settings, fit_payload
from kafkabench.config.properties import Setting, parse_overrides, read_properties_file
from kafkabench.config.redact import REDACTED, redact
from kafkabench.errors import ConfigError


def test_layers_defaults_then_files_then_x_routed_by_name():
    settings = build_settings(
        defaults={"producer": {"acks": "1", "linger.ms": "0"}, "consumer": {"enable.auto.commit": "false"}},
        producer_file={"linger.ms": Setting("5", "p.properties"), "bootstrap.servers": Setting("h:9092", "p.properties")},
        overrides=parse_overrides(["acks=all", "fetch.max.wait.ms=10", "client.id=bench"]),
    )
    assert settings.values("producer") == {"acks": "all", "linger.ms": "5", "client.id": "bench"}
    assert settings.values("consumer") == {"enable.auto.commit": "false", "fetch.max.wait.ms": "10", "client.id": "bench"}
    assert settings.producer["linger.ms"].source == "p.properties"


def test_unknown_key_names_the_closest_known_ones():
    with pytest.raises(ConfigError, match=r"-X: linger.mss is not a Kafka producer or consumer setting; did you mean linger.ms"):
        build_settings(defaults={}, overrides=parse_overrides(["linger.mss=5"]))


def test_a_consumer_key_in_the_producer_file_is_an_error():
    with pytest.raises(ConfigError, match="p.properties: fetch.max.wait.ms is not a Kafka producer setting"):
        build_settings(defaults={}, producer_file={"fetch.max.wait.ms": Setting("1", "p.properties")})


def test_unknown_topic_setting():
    with pytest.raises(ConfigError, match="--topic-config: max.message.byte is not a Kafka topic setting; did you mean max.message.bytes"):
        build_settings(defaults={}, topic=parse_overrides(["max.message.byte=5"], "--topic-config"))


def test_fit_payload_raises_every_limit_and_says_so():
    settings = build_settings(defaults={})
    fit_payload(settings, 1_302_245)
    needed = str(1_302_245 + RECORD_OVERHEAD)
    assert settings.values("producer")["max.request.size"] == needed
    assert settings.values("consumer")["max.partition.fetch.bytes"] == needed
    assert settings.values("consumer")["fetch.max.bytes"] == "52428800"  # the default already fits
    assert settings.values("topic")["max.message.bytes"] == needed
    assert len(settings.notes) == 3 and all("cannot fit a 1302245-byte value" in n for n in settings.notes)


def test_small_payload_keeps_defaults_but_sets_them_for_every_client():
    settings = build_settings(defaults={})
    fit_payload(settings, 100)
    assert settings.values("producer")["max.request.size"] == "1048576"
    assert settings.notes == []


def test_explicitly_too_small_limit_fails_naming_the_setting_and_where_it_came_from():
    settings = build_settings(defaults={}, overrides=parse_overrides(["max.request.size=1000000"]))
    with pytest.raises(ConfigError, match=r"-X: max.request.size=1000000 cannot fit the 1302245-byte payload \(needs at least 1303269"):
        fit_payload(settings, 1_302_245)


def test_explicit_limit_that_fits_is_kept():
    settings = build_settings(defaults={}, overrides=parse_overrides(["max.request.size=5000000"]))
    fit_payload(settings, 1_302_245)
    assert settings.values("producer")["max.request.size"] == "5000000"


def test_properties_files(tmp_path):
    path = tmp_path / "producer.properties"
    path.write_text("# comment\nacks = all\nlinger.ms:5\nsasl.jaas.config=org.Foo required \\\n  user=\"a\";\nbootstrap.servers=h:1\n")
    settings = read_properties_file(path)
    assert settings["acks"] == Setting("all", str(path))
    assert settings["linger.ms"].value == "5"
    assert settings["sasl.jaas.config"].value.startswith("org.Foo required user=")
    assert bootstrap_from(settings, None) == "h:1"
    with pytest.raises(ConfigError, match="does not exist"):
        read_properties_file(tmp_path / "missing.properties")


@pytest.mark.parametrize("bad", ["linger.ms", "=5"])
def test_malformed_override(bad):
    with pytest.raises(ConfigError, match="expected KEY=VALUE"):
        parse_overrides([bad])


def test_secrets_are_redacted():
    config = {"sasl.jaas.config": "x", "ssl.key.password": "p", "sasl_plain_password": "p", "acks": "1", "ssl.truststore.password": None}
    assert redact(config) == {"sasl.jaas.config": REDACTED, "ssl.key.password": REDACTED, "sasl_plain_password": REDACTED,
                              "acks": "1", "ssl.truststore.password": None}

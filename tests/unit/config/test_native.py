"""`librdkafka:NAME` settings: checked against librdkafka's own vocabulary, passed to confluent as they are,
not applicable to the other clients, and redacted like their Java counterparts."""

import pytest

from kafkabench.config import librdkafka, native
from kafkabench.config.client_settings import build_settings, fit_payload
from kafkabench.config.properties import Setting, parse_overrides, read_properties_file
from kafkabench.config.redact import REDACTED, redact
from kafkabench.config.translate import translate
from kafkabench.errors import ConfigError


def test_unknown_native_name_is_refused_with_librdkafka_names_suggested():
    with pytest.raises(ConfigError, match=r"^-X: librdkafka:fetch\.queue\.backof\.ms is not a librdkafka setting; "
                                          r"did you mean librdkafka:fetch\.queue\.backoff\.ms"):
        build_settings(defaults={}, overrides=parse_overrides(["librdkafka:fetch.queue.backof.ms=0"]))


def test_a_java_only_name_is_unknown_to_librdkafka():
    with pytest.raises(ConfigError, match=r"-X: librdkafka:buffer\.memory is not a librdkafka setting"):
        build_settings(defaults={}, overrides=parse_overrides(["librdkafka:buffer.memory=1"]))


def test_names_without_a_default_are_known():
    """rd_kafka_conf_dump() leaves out what has no default; the properties table and librdkafka itself do not."""
    assert "group.instance.id" not in librdkafka.conf_dump()
    settings = build_settings(defaults={}, overrides=parse_overrides(["librdkafka:group.instance.id=bench-1"]))
    assert settings.values("consumer") == {"librdkafka:group.instance.id": "bench-1"}


def test_native_names_go_to_the_roles_librdkafka_documents():
    settings = build_settings(defaults={}, overrides=parse_overrides(
        ["librdkafka:fetch.queue.backoff.ms=0", "librdkafka:queue.buffering.max.messages=500000",
         "librdkafka:socket.nagle.disable=true"]))
    assert settings.values("producer") == {"librdkafka:queue.buffering.max.messages": "500000",
                                           "librdkafka:socket.nagle.disable": "true"}
    assert settings.values("consumer") == {"librdkafka:fetch.queue.backoff.ms": "0",
                                           "librdkafka:socket.nagle.disable": "true"}
    assert settings.consumer["librdkafka:fetch.queue.backoff.ms"].source == "-X"


def test_a_consumer_only_name_in_the_producer_file_is_an_error():
    with pytest.raises(ConfigError, match=r"p\.properties: librdkafka:queued\.min\.messages is not a librdkafka producer "
                                          r"setting \(librdkafka documents it for the consumer only\)"):
        build_settings(defaults={}, producer_file={"librdkafka:queued.min.messages": Setting("5", "p.properties")})


def test_a_bad_value_is_refused_before_anything_runs():
    with pytest.raises(ConfigError, match=r'^-X: librdkafka:fetch\.queue\.backoff\.ms=soon: Invalid value .*"fetch\.queue\.backoff\.ms"'):
        build_settings(defaults={}, overrides=parse_overrides(["librdkafka:fetch.queue.backoff.ms=soon"]))
    with pytest.raises(ConfigError, match=r"outside allowed range"):
        build_settings(defaults={}, overrides=parse_overrides(["librdkafka:linger.ms=-1"]))


def test_translate_refuses_a_bad_native_value_by_its_native_key():
    with pytest.raises(ConfigError, match=r"confluent \(librdkafka\) rejects librdkafka:queue\.buffering\.max\.messages=lots"):
        translate("confluent", "producer", {"librdkafka:queue.buffering.max.messages": "lots"})


def test_native_names_are_not_topic_settings():
    with pytest.raises(ConfigError, match=r"--topic-config: librdkafka:linger\.ms: librdkafka names are client settings"):
        build_settings(defaults={}, topic=parse_overrides(["librdkafka:linger.ms=5"], "--topic-config"))


def test_the_target_chooses_the_brokers():
    with pytest.raises(ConfigError, match=r"-X: librdkafka:bootstrap\.servers=h:1: the cluster is chosen with --bootstrap-servers"):
        build_settings(defaults={}, overrides=parse_overrides(["librdkafka:bootstrap.servers=h:1"]))


def test_an_unknown_prefix_says_how_native_names_are_written():
    with pytest.raises(ConfigError, match=r"-X: rdkafka:linger\.ms is not a Kafka producer or consumer setting.*"
                                          r"a library's own names are written librdkafka:NAME"):
        build_settings(defaults={}, overrides=parse_overrides(["rdkafka:linger.ms=5"]))


def test_confluent_gets_native_names_without_prefix_and_they_win_over_java_names():
    settings = build_settings(defaults={"producer": {"linger.ms": "0", "acks": "1"}}, overrides=parse_overrides(
        ["max.request.size=2000000", "librdkafka:message.max.bytes=3000000",  # same name in librdkafka
         "librdkafka:queue.buffering.max.ms=20",  # linger.ms is librdkafka's alias of it
         "librdkafka:queue.buffering.max.messages=500000"]))
    producer = translate("confluent", "producer", settings.values("producer"))
    assert producer.config == {"acks": "1", "message.max.bytes": "3000000", "queue.buffering.max.ms": "20",
                               "queue.buffering.max.messages": "500000"}
    assert producer.not_applicable == []


def test_native_fetch_max_bytes_grows_the_response_buffer_too():
    consumer = translate("confluent", "consumer", {"librdkafka:fetch.max.bytes": "150000000"})
    assert consumer.config == {"fetch.max.bytes": "150000000", "receive.message.max.bytes": str(150000000 + 512)}


@pytest.mark.parametrize("client", ["java", "kafka-python", "aiokafka"])
def test_other_clients_report_native_names_as_not_applicable(client):
    translated = translate(client, "consumer", {"fetch.max.wait.ms": "10", "librdkafka:fetch.queue.backoff.ms": "0"})
    assert translated.not_applicable == ["librdkafka:fetch.queue.backoff.ms"]
    assert not any("fetch.queue.backoff" in key for key in translated.config)
    assert len(translated.config) == 1  # fetch.max.wait.ms, in the client's own spelling


def test_a_native_limit_too_small_for_the_payload_is_refused():
    settings = build_settings(defaults={}, overrides=parse_overrides(["librdkafka:message.max.bytes=1000000"]))
    with pytest.raises(ConfigError, match=r"-X: librdkafka:message\.max\.bytes=1000000 cannot fit the 1302245-byte payload"):
        fit_payload(settings, 1_302_245)


def test_native_names_from_a_properties_file(tmp_path):
    path = tmp_path / "consumer.properties"
    path.write_text("fetch.max.wait.ms=10\n"
                    "librdkafka:fetch.queue.backoff.ms=0\n"        # Java ends the key at ':'; kafkabench rejoins it
                    "librdkafka:queued.min.messages : 1000\n"
                    "librdkafka\\:queued.max.messages.kbytes=2048\n")  # escaped, as Java would write it
    given = read_properties_file(path)
    assert {key: setting.value for key, setting in given.items()} == {
        "fetch.max.wait.ms": "10", "librdkafka:fetch.queue.backoff.ms": "0", "librdkafka:queued.min.messages": "1000",
        "librdkafka:queued.max.messages.kbytes": "2048"}
    consumer = translate("confluent", "consumer", build_settings(defaults={}, consumer_file=given).values("consumer"))
    assert consumer.config == {"fetch.wait.max.ms": "10", "fetch.queue.backoff.ms": "0", "queued.min.messages": "1000",
                               "queued.max.messages.kbytes": "2048"}


def test_an_unknown_native_name_in_a_file_names_the_file(tmp_path):
    path = tmp_path / "producer.properties"
    path.write_text("librdkafka:queue.buffering.max.mesages=5\n")
    with pytest.raises(ConfigError, match=rf"^{path}: librdkafka:queue\.buffering\.max\.mesages is not a librdkafka setting; "
                                          r"did you mean librdkafka:queue\.buffering\.max\.messages"):
        build_settings(defaults={}, producer_file=read_properties_file(path))


def test_native_secrets_are_redacted_and_never_echoed_in_errors():
    assert redact({"librdkafka:sasl.password": "hunter2", "librdkafka:ssl.key.pem": "-----BEGIN",
                   "librdkafka:linger.ms": "5"}) == {
        "librdkafka:sasl.password": REDACTED, "librdkafka:ssl.key.pem": REDACTED, "librdkafka:linger.ms": "5"}
    with pytest.raises(ConfigError) as refused:
        build_settings(defaults={}, overrides=parse_overrides(["librdkafka:ssl.keystore.password=hunter2",
                                                               "librdkafka:sasl.oauthbearer.method=hunter2"]))
    assert "hunter2" not in str(refused.value) and REDACTED in str(refused.value)


def test_a_wrong_role_property_stays_quiet(capfd):
    """librdkafka warns when a client is given the other role's property; the throwaway check keeps it off
    the terminal (kafkabench routes by role, so only a direct caller of translate can get here)."""
    translate("confluent", "producer", {"librdkafka:fetch.queue.backoff.ms": "0"})
    assert "CONFWARN" not in capfd.readouterr().err


def test_the_prefix_table():
    assert native.split("librdkafka:linger.ms") == (native.LIBRDKAFKA, "linger.ms")
    assert native.split("linger.ms") == (None, "linger.ms")
    assert native.split("kafka-python:linger_ms") == (None, "kafka-python:linger_ms")  # not a form (yet)
    assert native.partition("java", {"acks": "1", "librdkafka:linger.ms": "5"}) == ({"acks": "1"}, {}, ["librdkafka:linger.ms"])
    assert native.partition("confluent", {"librdkafka:linger.ms": "5"}) == ({}, {"linger.ms": "5"}, [])


def test_librdkafka_vocabulary_comes_from_the_library():
    properties = librdkafka.properties()
    assert properties["fetch.queue.backoff.ms"].roles == {"consumer"}
    assert properties["queue.buffering.max.messages"].roles == {"producer"}
    assert properties["client.id"].roles == {"producer", "consumer"}
    assert librdkafka.canonical("linger.ms") == "queue.buffering.max.ms"
    assert librdkafka.canonical("enable.auto.commit") == "enable.auto.commit"  # a property, whatever the topic table says
    assert "dr_cb" not in properties  # set through a C function only


def test_plan_settings_take_native_names_and_a_typo_is_located(tmp_path):
    from kafkabench.plans.cells import expand
    from kafkabench.plans.loading import PlanError, load_plan

    plan = tmp_path / "plan.yaml"
    plan.write_text("name: p\nclients: [confluent, java]\nscenarios:\n  - lab: produce\n    count: 5\n    producer:\n"
                    "      librdkafka:queue.buffering.max.messages: 500000\n")
    cells = expand(load_plan(str(plan)))
    assert {cell.scenario.producer["librdkafka:queue.buffering.max.messages"].value for cell in cells} == {"500000"}
    plan.write_text("name: p\nscenarios: [{lab: produce, count: 5, producer: {'librdkafka:queue.buffering.max.mesages': 5}}]\n")
    with pytest.raises(PlanError, match=r"scenarios -> 1 \(produce\).*librdkafka:queue\.buffering\.max\.mesages is not a "
                                        r"librdkafka setting; did you mean librdkafka:queue\.buffering\.max\.messages"):
        expand(load_plan(str(plan)))

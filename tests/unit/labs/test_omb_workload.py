"""OMB's workload and driver files: every field mapped into kafkabench's runs, every refusal one line naming it."""

from pathlib import Path

import pytest
import yaml

from kafkabench.errors import ConfigError
from kafkabench.labs.omb.mapping import (backlog_scenario, mapped, max_rate_scenario, payload_source, produce_scenario,
                                         randomized_payloads)
from kafkabench.labs.omb.run import load_all
from kafkabench.labs.omb.scenario import OmbScenario
from kafkabench.labs.omb.workload import KAFKA_DRIVER, load_driver, load_workload

EVERY_FIELD = {
    "name": "every field", "topics": 3, "partitionsPerTopic": 4, "keyDistributor": "KEY_ROUND_ROBIN",
    "messageSize": 512, "useRandomizedPayloads": True, "randomBytesRatio": 0.25, "randomizedPayloadPoolSize": 7,
    "payloadFile": "unused.data", "subscriptionsPerTopic": 2, "consumerPerSubscription": 3, "producersPerTopic": 2,
    "producerRate": 9000, "consumerBacklogSizeGB": 0, "backlogDrainRatio": 0.5, "testDurationMinutes": 2,
    "warmupDurationMinutes": 1,
}
DRIVER = {"name": "Kafka-test", "driverClass": KAFKA_DRIVER, "replicationFactor": 3,
          "topicConfig": "min.insync.replicas=2\n",
          "commonConfig": "bootstrap.servers=localhost:9092\ndefault.api.timeout.ms=120000\nrequest.timeout.ms=9000\n",
          "producerConfig": "acks=all\nlinger.ms=1\nbatch.size=131072\nrequest.timeout.ms=8000\n",
          "consumerConfig": "auto.offset.reset=earliest\nenable.auto.commit=false\n"}


def write(tmp_path: Path, name: str, data: dict) -> Path:
    path = tmp_path / name
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return path


def test_every_workload_and_driver_field_is_mapped(tmp_path):
    workload = load_workload(write(tmp_path, "w.yaml", EVERY_FIELD))
    driver = load_driver(write(tmp_path, "d.yaml", DRIVER))
    run = mapped(workload, driver, OmbScenario(workloads=[tmp_path / "w.yaml"], client="confluent"))
    fields = run.fields
    assert (fields["topics"], fields["partitions"], fields["keys"], fields["size"]) == (3, 4, "round_robin", 512)
    assert (fields["producers"], fields["subscriptions"], fields["consumers"]) == (2, 2, 3)
    assert (fields["rate"], fields["duration"], fields["warmup"], fields["interval"]) == (9000, 120, 60, 10)
    assert fields["replication_factor"] == 3 and fields["client"] == "confluent"
    assert {k: v.value for k, v in fields["topic_config"].items()} == {"min.insync.replicas": "2"}
    producer = {k: v.value for k, v in fields["producer"].items()}
    consumer = {k: v.value for k, v in fields["consumer"].items()}
    assert producer == {"request.timeout.ms": "8000", "acks": "all", "linger.ms": "1", "batch.size": "131072"}
    assert consumer == {"default.api.timeout.ms": "120000", "request.timeout.ms": "9000",  # common, the role's own
                        "auto.offset.reset": "earliest", "enable.auto.commit": "false"}
    assert fields["producer"]["acks"].source == "Kafka-test producerConfig"
    assert any("bootstrap.servers=localhost:9092 from the driver not used" in note for note in run.notes)
    payloads = randomized_payloads(workload, tmp_path / "pool")
    assert len(payloads) == 7 and len({p.read_bytes() for p in payloads}) == 7
    assert all(len(p.read_bytes()) == 512 and p.read_bytes()[128:] == bytes(384) for p in payloads)  # 25 % random
    scenario = produce_scenario(run, payloads)
    assert scenario.payload == payloads and scenario.rate == 9000 and scenario.warmup == 60


def test_omb_s_defaults_and_the_overrides_of_the_command(tmp_path):
    data = {key: value for key, value in EVERY_FIELD.items() if key not in (
        "keyDistributor", "warmupDurationMinutes", "backlogDrainRatio", "useRandomizedPayloads", "randomBytesRatio",
        "randomizedPayloadPoolSize", "consumerBacklogSizeGB")}
    workload = load_workload(write(tmp_path, "w.yaml", data))
    assert workload.keys == "none" and workload.warmup_duration_minutes == 1 and workload.backlog_drain_ratio == 1.0
    run = mapped(workload, None, OmbScenario(workloads=[Path("w.yaml")], duration=30, warmup=5, interval=1))
    assert (run.fields["duration"], run.fields["warmup"], run.fields["interval"]) == (30, 5, 1)
    assert run.fields["replication_factor"] == 1 and run.fields["client"] == "java"
    assert any("measured for 30 s (--duration), not the workload's 2 min" in note for note in run.notes)
    no_consumers = mapped(load_workload(write(tmp_path, "n.yaml", {**data, "subscriptionsPerTopic": 0})), None,
                          OmbScenario(workloads=[Path("n.yaml")]))
    assert no_consumers.fields["consumers"] == 0


@pytest.mark.parametrize("change, says", [
    ({"bogus": 1}, "bogus: not a field of OMB's Workload"),
    ({"topics": 0}, "topics: input should be greater than or equal to 1"),
    ({"randomBytesRatio": 1.5}, "randomBytesRatio: input should be less than or equal to 1"),
    ({"keyDistributor": "ZIPF"}, "keyDistributor: must be one of"),
    ({"testDurationMinutes": 1.5}, "testDurationMinutes: input should be a valid integer"),
    ({"useRandomizedPayloads": True, "randomizedPayloadPoolSize": 0}, "randomizedPayloadPoolSize >= 1"),
    ({"useRandomizedPayloads": False, "payloadFile": None}, "payloadFile is required"),
    ({"consumerPerSubscription": 0}, "subscriptionsPerTopic needs consumerPerSubscription >= 1"),
    ({"consumerBacklogSizeGB": 1, "producerRate": 0}, "consumerBacklogSizeGB needs a producerRate"),
])
def test_a_workload_kafkabench_cannot_honour_is_refused_in_one_line_naming_the_field(tmp_path, change, says):
    data = {key: value for key, value in {**EVERY_FIELD, **change}.items() if value is not None}
    with pytest.raises(ConfigError) as refused:
        load_workload(write(tmp_path, "w.yaml", data))
    assert says in str(refused.value) and "\n" not in str(refused.value)


@pytest.mark.parametrize("change, says", [
    ({"driverClass": "io.openmessaging.benchmark.driver.pulsar.PulsarBenchmarkDriver"}, "runs Kafka's driver"),
    ({"replicationFactor": 0}, "replicationFactor"),
    ({"extra": "x"}, "extra: not a field of OMB's KafkaDriver"),
])
def test_a_driver_file_for_another_system_or_with_unknown_fields_is_refused(tmp_path, change, says):
    with pytest.raises(ConfigError, match=says):
        load_driver(write(tmp_path, "d.yaml", {**DRIVER, **change}))


def test_a_common_setting_neither_client_takes_is_refused(tmp_path):
    driver = load_driver(write(tmp_path, "d.yaml", {**DRIVER, "commonConfig": "no.such.setting=1\n"}))
    workload = load_workload(write(tmp_path, "w.yaml", EVERY_FIELD))
    with pytest.raises(ConfigError, match="commonConfig no.such.setting is neither a producer nor a consumer setting"):
        mapped(workload, driver, OmbScenario(workloads=[Path("w.yaml")]))


def test_missing_files_and_payloads_of_the_wrong_size_are_refused(tmp_path):
    with pytest.raises(ConfigError, match="does not exist"):
        load_workload(tmp_path / "nowhere.yaml")
    (tmp_path / "workloads").mkdir()
    (tmp_path / "payload").mkdir()
    fixed = {**EVERY_FIELD, "useRandomizedPayloads": False, "payloadFile": "payload/p.data"}
    path = write(tmp_path / "workloads", "w.yaml", fixed)
    with pytest.raises(ConfigError, match="payloadFile payload/p.data not found"):
        payload_source(load_workload(path), path)
    (tmp_path / "payload" / "p.data").write_bytes(b"x" * 100)
    with pytest.raises(ConfigError, match="holds 100 bytes, messageSize is 512"):
        payload_source(load_workload(path), path)
    (tmp_path / "payload" / "p.data").write_bytes(b"x" * 512)  # OMB's layout: workloads/ beside payload/
    assert payload_source(load_workload(path), path) == tmp_path / "payload" / "p.data"


@pytest.mark.parametrize("change, says", [
    ({"backlogDrainRatio": 0.5}, "backlogDrainRatio 0.5: kafkabench's backlog lab drains it all"),
    ({"subscriptionsPerTopic": 2}, "consumerBacklogSizeGB with 2 subscriptions"),
])
def test_a_backlog_the_backlog_lab_would_not_build_as_omb_does_is_refused_before_anything_starts(tmp_path, change,
                                                                                                says):
    backlog = {**EVERY_FIELD, "consumerBacklogSizeGB": 1, "subscriptionsPerTopic": 1, "backlogDrainRatio": 1.0,
               **change}
    with pytest.raises(ConfigError, match=says):
        load_all(OmbScenario(workloads=[write(tmp_path, "w.yaml", backlog)]))


def test_producer_rate_0_and_a_backlog_are_mapped_to_the_capacity_labs(tmp_path):
    workload = load_workload(write(tmp_path, "w.yaml", {**EVERY_FIELD, "producerRate": 0}))
    run = mapped(workload, None, OmbScenario(workloads=[Path("w.yaml")]))
    search = max_rate_scenario(run, [], ["p99=20ms"])
    assert (search.topics, search.keys, search.consumers, search.metric, search.slo) == (3, "round_robin", 3, "e2e",
                                                                                          ["p99=20ms"])
    backlog = load_workload(write(tmp_path, "b.yaml", {**EVERY_FIELD, "consumerBacklogSizeGB": 2,
                                                      "subscriptionsPerTopic": 1, "backlogDrainRatio": 1.0}))
    built = backlog_scenario(mapped(backlog, None, OmbScenario(workloads=[Path("b.yaml")])), backlog, [])
    assert (built.backlog_bytes, built.rate, built.topics, built.consumers) == (2 * 2**30, 9000, 3, 3)


def test_the_command_needs_a_workload():
    with pytest.raises(ValueError, match="give one OMB workload file or more"):
        OmbScenario()

"""An OMB workload and Kafka driver as kafkabench's own runs: the throughput lab's produce run (producers,
consumers in subscriptions, topics, keys, rate, warm-up), the capacity lab's answer for `producerRate: 0`, the
backlog lab for `consumerBacklogSizeGB`.

OMB creates `producersPerTopic` producers on each topic; kafkabench starts `producersPerTopic` producer processes,
each writing every topic in turn, and `consumerPerSubscription` consumers in each of `subscriptionsPerTopic` groups,
each subscribed to every topic: the same records, rates and groups with fewer clients when there are several topics.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from pathlib import Path

from kafkabench.config import java_names
from kafkabench.config.properties import Setting
from kafkabench.errors import ConfigError
from kafkabench.labs.omb.scenario import OmbScenario
from kafkabench.labs.omb.workload import DEFAULT_DRIVER, KafkaDriver, Workload
from kafkabench.labs.capacity.scenario import BacklogScenario, MaxRateScenario
from kafkabench.labs.throughput.scenario import ProduceScenario

SET_HERE = {"bootstrap.servers": "the cluster is kafkabench's target (--bootstrap-servers or the embedded one)",
            "key.serializer": "kafkabench's workers send bytes", "value.serializer": "kafkabench's workers send bytes",
            "key.deserializer": "kafkabench's workers read bytes",
            "value.deserializer": "kafkabench's workers read bytes",
            "group.id": "each subscription is a group of its own, as OMB names them"}


@dataclass
class Mapped:
    """What a workload becomes: the produce run's fields (without the payloads and rate, set when it runs) and
    what was set here in place of the files' own values."""

    fields: dict
    notes: list[str] = field(default_factory=list)


def mapped(workload: Workload, driver: KafkaDriver | None, scenario: OmbScenario) -> Mapped:
    driver = driver or DEFAULT_DRIVER
    notes: list[str] = []
    producer, consumer = _settings(driver, notes)
    consumers = workload.consumer_per_subscription if workload.subscriptions_per_topic else 0
    warmup = scenario.warmup if scenario.warmup is not None else workload.warmup_duration_minutes * 60
    duration = scenario.duration or workload.test_duration_minutes * 60
    if scenario.duration:
        notes.append(f"measured for {duration:g} s (--duration), not the workload's "
                     f"{workload.test_duration_minutes} min")
    fields = {"client": scenario.client, "size": workload.message_size, "producers": workload.producers_per_topic,
              "consumers": consumers, "subscriptions": max(1, workload.subscriptions_per_topic),
              "partitions": workload.partitions_per_topic, "topics": workload.topics, "keys": workload.keys,
              "replication_factor": driver.replication_factor, "duration": duration, "warmup": warmup,
              "interval": scenario.interval, "timeout": scenario.timeout, "rate": workload.producer_rate or -1,
              "topic_config": {key: Setting(value, f"{driver.name} topicConfig")
                               for key, value in driver.settings("topic").items()},
              "producer": producer, "consumer": consumer}
    return Mapped(fields, notes)


def _settings(driver: KafkaDriver, notes: list[str]) -> tuple[dict, dict]:
    """The producer's and the consumer's settings: commonConfig's that the role knows, then the role's own."""
    common = driver.settings("common")
    for key in common:
        if key not in SET_HERE and not any(key in java_names.names(role) for role in ("producer", "consumer")):
            raise ConfigError(f"OMB driver {driver.name}: commonConfig {key} is neither a producer nor a consumer "
                              "setting; kafkabench's clients cannot take it (remove it)")
    roles = []
    for role in ("producer", "consumer"):
        known = java_names.names(role)
        settings = {k: Setting(v, f"{driver.name} commonConfig") for k, v in common.items() if k in known}
        settings.update({k: Setting(v, f"{driver.name} {role}Config") for k, v in driver.settings(role).items()})
        for key in [key for key in settings if key in SET_HERE]:
            notes.append(f"{role} {key}={settings.pop(key).value} from the driver not used: {SET_HERE[key]}")
        roles.append(settings)
    return roles[0], roles[1]


def payload_source(workload: Workload, workload_file: Path) -> Path | None:
    """The workload's payload file, where OMB would find it (the working directory) or beside the workload file or
    its directory's parent (OMB's repository layout: workloads/ and payload/ side by side); None with randomized
    payloads. Refused unless it holds exactly messageSize bytes, as OMB refuses it."""
    if workload.use_randomized_payloads:
        return None
    given = Path(workload.payload_file)
    candidates = [given] if given.is_absolute() else [given, workload_file.parent / given,
                                                         workload_file.parent.parent / given]
    found = next((path for path in candidates if path.is_file()), None)
    if found is None:
        raise ConfigError(f"OMB workload {workload_file}: payloadFile {given} not found (looked in "
                          f"{', '.join(str(path.parent.resolve()) for path in candidates)})")
    size = found.stat().st_size
    if size != workload.message_size:
        raise ConfigError(f"OMB workload {workload_file}: payloadFile {found} holds {size:,} bytes, messageSize is "
                          f"{workload.message_size:,} (OMB refuses a mismatch too)")
    return found


def randomized_payloads(workload: Workload, directory: Path) -> list[Path]:
    """OMB's randomized payloads: randomizedPayloadPoolSize values of messageSize bytes, randomBytesRatio of each
    random, the rest zeros; sent in turn (OMB picks one at random per send)."""
    directory.mkdir(parents=True, exist_ok=True)
    size, pool = workload.message_size, workload.randomized_payload_pool_size
    random_bytes = round(size * workload.random_bytes_ratio)
    draw = random.Random(size * 1_000_003 + pool)
    paths = []
    for index in range(pool):
        path = directory / f"payload-{index:05d}.bin"
        path.write_bytes(draw.randbytes(random_bytes) + bytes(size - random_bytes))
        paths.append(path)
    return paths


def produce_scenario(mapped_run: Mapped, payloads: list[Path], rate: float | None = None) -> ProduceScenario:
    """The workload's produce run; its consumers also measure e2e as OMB does, to set beside kafkabench's."""
    fields = {**mapped_run.fields, "payload": payloads, "record_time_e2e": mapped_run.fields["consumers"] > 0}
    if rate is not None:
        fields["rate"] = rate
    return ProduceScenario(**fields)


CAPACITY_FIELDS = ("client", "size", "payload", "producers", "partitions", "replication_factor", "topics", "keys",
                   "timeout", "topic_config", "producer", "consumer")


def max_rate_scenario(mapped_run: Mapped, payloads: list[Path], slo: list[str]) -> MaxRateScenario:
    """`producerRate: 0`: the capacity lab's search under the workload's shape (one group reading, e2e judged; none
    reading: publish), its answer the rate the workload then runs at."""
    fields = {**mapped_run.fields, "payload": payloads}
    consumers = fields["consumers"]
    return MaxRateScenario(**{name: fields[name] for name in CAPACITY_FIELDS}, consumers=consumers, slo=slo,
                           metric="e2e" if consumers else "publish")


def backlog_scenario(mapped_run: Mapped, workload: Workload, payloads: list[Path]) -> BacklogScenario:
    """`consumerBacklogSizeGB`: the backlog lab, building that many GiB (OMB's GB are 2^30 bytes) at producerRate while
    the consumers wait, then draining it as the producers go on."""
    fields = {**mapped_run.fields, "payload": payloads}
    return BacklogScenario(**{name: fields[name] for name in CAPACITY_FIELDS}, rate=workload.producer_rate,
                           backlog=f"{workload.consumer_backlog_size_gb}GiB", consumers=fields["consumers"],
                           interval=fields["interval"], warmup=fields["warmup"])

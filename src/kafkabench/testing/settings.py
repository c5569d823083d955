"""What a test asks of its cluster and its topic: the `kafka` marker's settings (the closest marker wins, setting by
setting) over the ini options, checked with one line that names what is wrong."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable

from kafkabench.cluster.listeners import MECHANISMS, MODES

# ini option -> (help, default): the cluster every test gets unless its marker asks for another
INI = {
    "kafka_brokers": ("brokers of the embedded Kafka cluster (kafkabench)", "1"),
    "kafka_controllers": ("its dedicated KRaft controllers; 0: combined nodes (kafkabench)", "0"),
    "kafka_version": ("the Apache Kafka release it runs; empty: kafkabench's pinned one (kafkabench)", ""),
    "kafka_heal_timeout": ("seconds a fault's heal may take before the test fails (kafkabench)", "60"),
}
MARKER = ("kafka(**settings): the embedded Kafka cluster and topic this test gets (kafkabench): brokers, controllers, "
          "version, security, sasl_mechanism, network, broker_config; partitions, replication_factor, topic_config")
NETWORKS = ("loopback", "isolated")


class SettingError(Exception):
    """A marker or ini setting kafkabench cannot use: the message is the one line the test fails with."""


@dataclass(frozen=True)
class ClusterShape:
    """One embedded cluster: tests that ask for the same shape share it for the session."""

    brokers: int = 1
    controllers: int = 0
    version: str | None = None
    security: str = "plaintext"
    sasl_mechanism: str = "SCRAM-SHA-512"
    network: str = "loopback"
    broker_config: tuple[tuple[str, str], ...] = ()

    def describe(self) -> str:
        parts = [f"{self.brokers} broker(s)"] + ([f"{self.controllers} controller(s)"] if self.controllers else [])
        parts += [f"Kafka {self.version}"] if self.version else []
        parts += [self.security] if self.security != "plaintext" else []
        parts += ["an isolated network"] if self.network == "isolated" else []
        return ", ".join(parts)


@dataclass(frozen=True)
class TopicShape:
    partitions: int = 1
    replication_factor: int | None = None  # None: as many as the brokers, at most 3
    config: dict[str, str] = field(default_factory=dict)

    def replicas(self, brokers: int) -> int:
        return self.replication_factor or min(brokers, 3)


def _count(minimum: int) -> Callable[[Any], int]:
    def check(value: Any) -> int:
        if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
            raise ValueError(f"a whole number of at least {minimum}")
        return value
    return check


def _one_of(choices: Iterable[str], upper: bool = False) -> Callable[[Any], str]:
    choices = tuple(choices)

    def check(value: Any) -> str:
        text = str(value).upper() if upper else str(value).lower()
        if text not in choices:
            raise ValueError(f"one of {', '.join(choices)}")
        return text
    return check


def _config(value: Any) -> tuple[tuple[str, str], ...]:
    if not isinstance(value, dict) or not all(isinstance(key, str) for key in value):
        raise ValueError("a dict of setting names to values")
    return tuple(sorted((key, str(item).lower() if isinstance(item, bool) else str(item))
                        for key, item in value.items()))


def _version(value: Any) -> str | None:
    if not isinstance(value, str):
        raise ValueError('a release such as "4.1.0"')
    return value or None


CLUSTER_SETTINGS: dict[str, Callable[[Any], Any]] = {
    "brokers": _count(1), "controllers": _count(0), "version": _version, "security": _one_of(MODES),
    "sasl_mechanism": _one_of(MECHANISMS, upper=True), "network": _one_of(NETWORKS), "broker_config": _config,
}
TOPIC_SETTINGS: dict[str, Callable[[Any], Any]] = {
    "partitions": _count(1), "replication_factor": _count(1), "topic_config": lambda value: dict(_config(value)),
}


def asked(marks: Iterable, ini: Callable[[str], str]) -> tuple[ClusterShape, TopicShape]:
    """The cluster and topic of a test: `marks` its `kafka` markers, closest first (`node.iter_markers`); `ini` reads
    an ini option. SettingError names the first thing wrong."""
    settings: dict[str, Any] = {}
    for mark in reversed(list(marks)):
        if mark.args:
            raise SettingError(f"@pytest.mark.kafka{mark.args!r}: settings are named, as in "
                               "@pytest.mark.kafka(brokers=3)")
        settings.update(mark.kwargs)
    known = {**CLUSTER_SETTINGS, **TOPIC_SETTINGS}
    if unknown := sorted(set(settings) - set(known)):
        raise SettingError(f"@pytest.mark.kafka: unknown setting {unknown[0]!r}; known: {', '.join(known)}")
    defaults = {"brokers": _ini_int(ini, "kafka_brokers", 1), "controllers": _ini_int(ini, "kafka_controllers", 0),
                "version": ini("kafka_version") or None}
    checked = {}
    for name, value in settings.items():
        try:
            checked[name] = known[name](value)
        except ValueError as exc:
            raise SettingError(f"@pytest.mark.kafka({name}={value!r}): must be {exc}") from None
    cluster = ClusterShape(**{**defaults, **{k: v for k, v in checked.items() if k in CLUSTER_SETTINGS}})
    if cluster.network == "isolated" and os.geteuid() != 0:
        raise SettingError('@pytest.mark.kafka(network="isolated"): network faults need root (they run in network '
                           "namespaces); run the tests as root, or leave network faults out of this test")
    topic = TopicShape(checked.get("partitions", 1), checked.get("replication_factor"), checked.get("topic_config", {}))
    if topic.replicas(cluster.brokers) > cluster.brokers:
        raise SettingError(f"@pytest.mark.kafka(replication_factor={topic.replication_factor}): the cluster has "
                           f"{cluster.brokers} broker(s); ask for brokers={topic.replication_factor} too")
    return cluster, topic


def _ini_int(ini: Callable[[str], str], name: str, minimum: int) -> int:
    text = ini(name)
    try:
        return _count(minimum)(int(text))
    except ValueError:
        raise SettingError(f"{name} = {text}: must be a whole number of at least {minimum}") from None


def heal_timeout(ini: Callable[[str], str]) -> float:
    text = ini("kafka_heal_timeout")
    try:
        seconds = float(text)
    except ValueError:
        seconds = 0
    if seconds <= 0:
        raise SettingError(f"kafka_heal_timeout = {text}: must be a number of seconds above 0")
    return seconds

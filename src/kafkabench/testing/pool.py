"""The session's clusters: one per shape a test asks for, started when first asked, stopped when the session ends.

A cluster that fails to start is not tried again for every test that wants it: its one-line reason is kept and
given to each. Its nodes die with the test process however it ends (a parent-death signal, `kafkabench.processes`),
so an interrupted or killed session leaves no broker behind."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from kafkabench.cluster import EmbeddedCluster
from kafkabench.cluster.embedded import FAST_FAILOVER, QUIET_IDLE, SHORT_LIVED_JVM_OPTIONS, SMALL_INTERNAL_TOPICS
from kafkabench.cluster.listeners import parse_listeners
from kafkabench.cluster.variant import BrokerVariant
from kafkabench.errors import KafkabenchError
from kafkabench.testing.cluster import KafkaCluster
from kafkabench.testing.settings import ClusterShape


class ClusterUnavailable(KafkabenchError):
    """The cluster a test asked for could not be started."""


class ClusterPool:
    def __init__(self, directory: Callable[[str], Path], heal_timeout_s: float) -> None:
        self._directory = directory  # a fresh directory for a cluster, by a name
        self._heal_timeout_s = heal_timeout_s
        self._clusters: dict[ClusterShape, KafkaCluster] = {}
        self._failed: dict[ClusterShape, str] = {}
        self.startup_s: dict[ClusterShape, float] = {}

    def get(self, shape: ClusterShape) -> KafkaCluster:
        if shape in self._failed:
            raise ClusterUnavailable(self._failed[shape])
        if shape not in self._clusters:
            began = time.monotonic()
            try:
                self._clusters[shape] = KafkaCluster(start(shape, self._directory(f"kafka-{len(self.startup_s)}")),
                                                     self._heal_timeout_s)
            except KafkabenchError as exc:
                self._failed[shape] = f"the Kafka cluster ({shape.describe()}) did not start: {exc}"
                raise ClusterUnavailable(self._failed[shape]) from None
            finally:
                self.startup_s[shape] = time.monotonic() - began
        return self._clusters[shape]

    def close(self) -> None:
        clusters, self._clusters = list(self._clusters.values()), {}
        for cluster in clusters:
            cluster.embedded.stop()


def start(shape: ClusterShape, directory: Path) -> EmbeddedCluster:
    """The embedded cluster of a shape, started: JVMs tuned for a short life, brokers fenced fast when they die, small
    internal topics, few threads waking while idle. An unknown release or broker setting is refused before anything
    starts."""
    BrokerVariant.of(shape.version, dict(shape.broker_config)).check(where="@pytest.mark.kafka")
    security = parse_listeners(shape.security, shape.sasl_mechanism) if shape.security != "plaintext" else None
    cluster = EmbeddedCluster(brokers=shape.brokers, controllers=shape.controllers, directory=directory,
                              broker_config_overrides={**FAST_FAILOVER, **SMALL_INTERNAL_TOPICS, **QUIET_IDLE,
                                                       **dict(shape.broker_config)},
                              security=security, network=shape.network, kafka_version=shape.version,
                              jvm_options=SHORT_LIVED_JVM_OPTIONS)
    return cluster.start()

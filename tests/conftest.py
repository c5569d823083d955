"""Shared fixtures. Integration tests get one real broker per session: embedded, or KAFKABENCH_BOOTSTRAP."""

from __future__ import annotations

import os
import uuid
from dataclasses import dataclass

import pytest

from kafkabench.admin import KafkaAdmin


@dataclass(frozen=True)
class ExternalCluster:
    bootstrap_servers: str


@pytest.fixture(scope="session")
def kafka_cluster(tmp_path_factory):
    """A real Kafka cluster for the whole session; an embedded one is always stopped at the end."""
    if bootstrap := os.environ.get("KAFKABENCH_BOOTSTRAP"):
        yield ExternalCluster(bootstrap)
        return
    from kafkabench.cluster import EmbeddedCluster

    with EmbeddedCluster(brokers=1, directory=tmp_path_factory.mktemp("kafka-session")) as cluster:
        yield cluster


# brokers that stop heartbeating are fenced after 3 s instead of 9 s, so failover tests stay short
FAST_FAILOVER = {"broker.session.timeout.ms": "3000", "broker.heartbeat.interval.ms": "500"}


def three_brokers(directory, controllers: int = 0):
    """A 3-broker embedded cluster of a test module's own, failing over fast (fault tests break it on purpose);
    `controllers` dedicated controller nodes beside them, or combined nodes."""
    from kafkabench.cluster import EmbeddedCluster

    return EmbeddedCluster(brokers=3, controllers=controllers, directory=directory, broker_config_overrides=FAST_FAILOVER)


@pytest.fixture
def admin(kafka_cluster):
    with KafkaAdmin(kafka_cluster.bootstrap_servers) as client:
        yield client


@pytest.fixture
def topic_name() -> str:
    """A fresh name per test, so tests never see each other's records."""
    return f"test-{uuid.uuid4().hex[:12]}"


@pytest.fixture(scope="session", autouse=True)
def isolated_cluster_dir(tmp_path_factory):
    """Commands that look for `the` embedded cluster find this session's directory, never the user's own."""
    previous = os.environ.get("KAFKABENCH_CLUSTER_DIR")
    os.environ["KAFKABENCH_CLUSTER_DIR"] = str(tmp_path_factory.mktemp("default-cluster-dir"))
    yield
    if previous is None:
        os.environ.pop("KAFKABENCH_CLUSTER_DIR", None)
    else:
        os.environ["KAFKABENCH_CLUSTER_DIR"] = previous

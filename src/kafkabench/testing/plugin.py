"""The pytest plugin's fixtures and hooks (on with `-p kafkabench`, or `pytest_plugins = ["kafkabench.testing.plugin"]`
in a conftest.py).

- `kafka_cluster`: the session's embedded cluster of the shape the test's `kafka` marker (or the ini options) asks
  for, with its faults as context managers (`kafkabench.testing.cluster.KafkaCluster`); whole again after each test.
- `kafka_bootstrap`: its bootstrap servers; `kafka_admin`: a confluent-kafka AdminClient connected to it.
- `kafka_topic`: a fresh topic per test (partitions, replication factor and configs from the marker), deleted after;
  `kafka_topics`: more of them, `kafka_topics(partitions=3)`.
- `kafka_clusters`: the session's clusters by shape, for a session-scoped fixture of the application's own.

Settings that are wrong (an unknown marker setting, network faults without root, no JDK) fail the test at setup
with one line, not a traceback."""

from __future__ import annotations

import re
import uuid
import warnings
from collections.abc import Callable, Iterator
from typing import TypeVar

import pytest

from kafkabench.errors import KafkabenchError
from kafkabench.testing.settings import INI, MARKER, ClusterShape, SettingError, TopicShape, asked, heal_timeout

T = TypeVar("T")


def pytest_addoption(parser: pytest.Parser) -> None:
    for name, (help_text, default) in INI.items():
        parser.addini(name, help_text, default=default)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", MARKER)


def _or_fail(action: Callable[[], T]) -> T:
    """The action's result; a setting or a cluster kafkabench cannot use fails the test with the one line that says
    why (raised outside the handler, so that no chained traceback comes with it)."""
    try:
        return action()
    except (SettingError, KafkabenchError) as exc:
        message = str(exc)
    pytest.fail(message, pytrace=False)


def _asked(request: pytest.FixtureRequest) -> tuple[ClusterShape, TopicShape]:
    return _or_fail(lambda: asked(request.node.iter_markers("kafka"), request.config.getini))


@pytest.fixture(scope="session")
def kafka_clusters(tmp_path_factory: pytest.TempPathFactory, pytestconfig: pytest.Config) -> Iterator:
    from kafkabench.testing.pool import ClusterPool

    pool = ClusterPool(lambda name: tmp_path_factory.mktemp(name), _or_fail(lambda: heal_timeout(pytestconfig.getini)))
    try:
        yield pool
    finally:
        pool.close()


@pytest.fixture
def kafka_cluster(kafka_clusters, request: pytest.FixtureRequest) -> Iterator:
    shape, _ = _asked(request)
    cluster = _or_fail(lambda: kafka_clusters.get(shape))
    _or_fail(cluster.embedded.check_routes)  # an isolated network's addresses still lead into its own bridge
    yield cluster
    cluster.mend()  # a fault the test made outside the context managers must not reach the next test


@pytest.fixture
def kafka_bootstrap(kafka_cluster) -> str:
    return kafka_cluster.bootstrap_servers


@pytest.fixture
def kafka_admin(kafka_cluster):
    from confluent_kafka.admin import AdminClient

    return AdminClient(kafka_cluster.client_config())


@pytest.fixture
def kafka_topics(kafka_cluster, request: pytest.FixtureRequest) -> Iterator:
    """Makes fresh topics, `kafka_topics(partitions=3, replication_factor=1, config={...})` (the marker's settings
    by default), each named after the test; all deleted after it."""
    from kafkabench.admin import KafkaAdmin

    _, shape = _asked(request)
    made: list[str] = []
    stem = re.sub(r"[^A-Za-z0-9._-]+", "-", request.node.name)[:80]

    def make(partitions: int | None = None, replication_factor: int | None = None,
             config: dict[str, str] | None = None) -> str:
        name = f"{stem}-{uuid.uuid4().hex[:8]}"
        replicas = replication_factor or shape.replicas(len(kafka_cluster.brokers))
        def create() -> None:
            connection = kafka_cluster.embedded.connection
            with KafkaAdmin(connection) as admin:  # returns once every broker has the topic in its metadata
                admin.create_topic(name, partitions or shape.partitions, replicas, {**shape.config, **(config or {})})

        _or_fail(create)
        made.append(name)
        return name

    yield make
    if made:
        try:
            with KafkaAdmin(kafka_cluster.embedded.connection) as admin:
                admin.delete_topics(made)
        except KafkabenchError as exc:
            warnings.warn(f"kafkabench: the test's topics {', '.join(made)} were not deleted: {exc}", stacklevel=1)


@pytest.fixture
def kafka_topic(kafka_topics) -> str:
    return kafka_topics()

"""Shared fixtures. Integration tests get one real broker per session: embedded, or KAFKABENCH_BOOTSTRAP."""

from __future__ import annotations

import json
import os
import uuid
from dataclasses import dataclass
from pathlib import Path

import pytest

from kafkabench.admin import KafkaAdmin
from kafkabench.cluster.artifacts import default_cache_dir
from kafkabench.cluster.embedded import FAST_FAILOVER
from kafkabench.core.environment import SHORT_LIVED_JVMS
from kafkabench.errors import WaitTimeout
from kafkabench.waiting import wait_until

from tests.debian import PROMETHEUS, PROMTOOL, install

pytest_plugins = ["pytester"]  # the pytest plugin's tests run pytest on sample tests
# the Java workers and the brokers the suite's commands start live seconds: C1 only, no heap touched up front
# (benchmarks/short_lived_worker.py); every process a test starts inherits it
os.environ[SHORT_LIVED_JVMS] = "1"
# pytester runs its sessions with HOME in a directory of their own: without this, each session that starts a cluster
# would fetch Kafka's jars again and make its own class-data-sharing archive of the broker's classes
os.environ.setdefault("KAFKABENCH_CACHE", str(default_cache_dir()))


@dataclass(frozen=True)
class ExternalCluster:
    bootstrap_servers: str


@pytest.fixture(scope="session")
def kafka_cluster(tmp_path_factory):
    """A real Kafka cluster for the whole session; an embedded one is always stopped at the end."""
    if bootstrap := os.environ.get("KAFKABENCH_BOOTSTRAP"):
        yield ExternalCluster(bootstrap)
        return
    with embedded(brokers=1, directory=tmp_path_factory.mktemp("kafka-session")) as cluster:
        yield cluster


def embedded(broker_config_overrides=None, **settings):
    """An embedded cluster as a test needs one: its brokers' JVMs for a short life (C1 only: 0.64 of the CPU to
    start, 0.58 under load, on this machine's two cores), internal topics of 5 partitions, not 50, and few threads
    waking while idle (QUIET_IDLE: 0.8 of the CPU between tests)."""
    from kafkabench.cluster import EmbeddedCluster
    from kafkabench.cluster.embedded import QUIET_IDLE, SHORT_LIVED_JVM_OPTIONS, SMALL_INTERNAL_TOPICS

    return EmbeddedCluster(jvm_options=SHORT_LIVED_JVM_OPTIONS, broker_config_overrides={
        **SMALL_INTERNAL_TOPICS, **QUIET_IDLE, **(broker_config_overrides or {})}, **settings)


def three_brokers(directory, controllers: int = 0):
    """A 3-broker embedded cluster of a test module's own, failing over fast (fault tests break it on purpose);
    `controllers` dedicated controller nodes beside them, or combined nodes."""
    return embedded(brokers=3, controllers=controllers, directory=directory, broker_config_overrides=FAST_FAILOVER)


def wait_for(condition, timeout_s: float, what: str):
    """The condition's first truthy value, polled every 0.2 s; the test fails naming `what` at the timeout."""
    try:
        return wait_until(condition, timeout_s=timeout_s, what=what, interval_s=0.2)
    except WaitTimeout as exc:
        pytest.fail(str(exc))


def isr_of(cluster, topic: str, partition: int = 0) -> set[int]:
    # polled inside waits: a slow answer on a loaded machine must not end the wait it is part of
    with KafkaAdmin(cluster.live_bootstrap_servers(), timeout_s=15) as admin:
        return set(admin.describe_topic(topic).partitions[partition].isr)


def write_acks_all(bootstrap: str, topic: str, count: int = 5, timeout_s: float = 30, retries: int | None = None) -> list[str]:
    """acks=all writes; the names of the errors they got (empty: all acknowledged). `retries=0` shows the
    broker's first answer instead of retrying it until the message times out."""
    from confluent_kafka import Producer

    from kafkabench.admin import quiet_client_config

    settings = {"message.timeout.ms": int(timeout_s * 1000), **({"retries": retries} if retries is not None else {})}
    producer = Producer(quiet_client_config(bootstrap, acks="all", **settings))
    errors: list[str] = []
    for i in range(count):
        producer.produce(topic, f"v{i}".encode(), on_delivery=lambda err, _msg: err and errors.append(err.name()))
    remaining = producer.flush(timeout_s + 5)
    return errors + ["unacknowledged"] * remaining


@pytest.fixture(scope="session")
def prometheus_installed():
    """Debian's prometheus and promtool (tests.debian), installed once a session when missing; the test is
    skipped, saying why, when they cannot be had."""
    if reason := install("prometheus", PROMETHEUS, PROMTOOL):
        pytest.skip(reason)


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


# the packages whose modules share one cluster they break on purpose (tests/integration/faulty_cluster.py), each a
# group of its own
SHARED_CLUSTER_PACKAGES = ("tests/integration/three_plus_controller/", "tests/integration/three_plus_controller_delivery/")
# seconds per group in a full run (tools/test_durations.py writes it): the workers take the longest groups first
DURATIONS = Path(__file__).with_name("durations.json")


def _group(nodeid: str) -> str:
    path = nodeid.split("::")[0]
    return next((package.rstrip("/") for package in SHARED_CLUSTER_PACKAGES if path.startswith(package)), path)


def expected_seconds(groups: set[str]) -> dict[str, float]:
    """Each group's seconds in the last measured run; an integration module not measured yet counts as the median
    measured one, any other group as nothing."""
    known = json.loads(DURATIONS.read_text()) if DURATIONS.is_file() else {}
    integration = sorted(s for group, s in known.items() if group.startswith("tests/integration/")) or [0.0]
    default = integration[len(integration) // 2]
    return {group: known.get(group, default if group.startswith("tests/integration/") else 0.0) for group in groups}


def check_short_version(item, short: str | None, items) -> None:
    """A long scenario leaves `make test` only because a short version of it is there. On a test,
    `@pytest.mark.long(short="tests/...py::test_name")` names it: that test must exist, and not be long itself. On one
    parameter set of a parametrized test (`pytest.param(..., marks=pytest.mark.long)`), the test's other sets are
    its short version: one of them must not be long."""
    if short is None:
        found = any(other.parent is item.parent and getattr(other, "originalname", None) == item.originalname
                    and other.get_closest_marker("long") is None for other in items)
    else:
        path, _, name = short.partition("::")
        source = Path(__file__).parent.parent / path
        text = source.read_text() if path.endswith(".py") and source.is_file() else ""
        definition = text.find(f"def {name}(") if name else -1
        found = definition >= 0 and "@pytest.mark.long" not in text[text.rfind("\n\n", 0, definition):definition]
    if not found:
        why = "no other set is short" if short is None else f"{short!r} is not such a test"
        raise pytest.UsageError(f"{item.nodeid}: a long scenario has a short version in the suite, named by "
                                "@pytest.mark.long(short=\"tests/...py::test_name\") or, on one parameter set, its "
                                f"test's other sets; {why}")


@pytest.hookimpl(tryfirst=True)  # before xdist's own hook, which reads the groups into the node ids
def pytest_collection_modifyitems(config, items):
    """`make test` runs pytest-xdist workers (--dist loadgroup): a module's tests stay together on one worker, so its
    cluster fixture starts once, and a shared-cluster package's modules share its one cluster. The groups are handed
    out longest first (--no-loadscope-reorder keeps this order; xdist's own puts the groups with most tests first, and
    long modules of one or two tests came last, each on a worker alone: 815 s against 771 s, simulated from the
    same run's durations, the first as measured). Every unit test is `quick`."""
    for item in items:
        if item.nodeid.startswith("tests/unit/"):
            item.add_marker(pytest.mark.quick)
        if long := item.get_closest_marker("long"):
            check_short_version(item, long.kwargs.get("short"), items)
    if not config.pluginmanager.hasplugin("xdist"):  # pytest -p no:xdist: one process, nothing to group
        return
    groups = {item: _group(item.nodeid) for item in items}
    for item, group in groups.items():
        item.add_marker(pytest.mark.xdist_group(group))
    seconds = expected_seconds(set(groups.values()))
    items.sort(key=lambda item: -seconds[groups[item]])  # stable: a module's tests keep their order


@pytest.hookimpl(optionalhook=True)  # pytest -p no:xdist has no such hook
def pytest_xdist_node_collection_finished(node, ids):
    """Under `--dist loadgroup`, every node id a worker collected must carry its group; a pytest that keeps node ids
    where xdist cannot append it (9.2 with xdist 3.8) would spread a module over both workers, each starting its
    clusters: a suite twice as slow, never red. So it is red here, saying why."""
    if node.config.getvalue("dist") == "loadgroup" and ids and "@" not in ids[0]:
        pytest.exit(f"pytest-xdist could not group the tests (pytest {pytest.__version__}): a module's tests would "
                    "run on both workers; pin a pytest it supports in pyproject.toml", returncode=3)

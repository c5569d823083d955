"""The cluster that tests which break a cluster on purpose share: 3 brokers beside a dedicated controller, as production
runs KRaft, started once for the package that uses these fixtures and stopped when the package is done. After each
test every node is running again; after each module the topics it made are gone and every partition's ISR is full,
so the next module gets the cluster as the first one did. Two packages use them, each with a cluster of its own, so
the two halves of the fault tests run side by side on two of the suite's workers."""

import pytest

from kafkabench.admin import KafkaAdmin
from kafkabench.cluster.faults import EmbeddedFaults

from tests.conftest import three_brokers

HEALED_S = 120  # a loaded machine's brokers catching up on every partition after the module's last fault


@pytest.fixture(scope="package")
def three_plus_controller(tmp_path_factory):
    with three_brokers(tmp_path_factory.mktemp("three-plus-controller"), controllers=1) as cluster:
        yield cluster


@pytest.fixture(scope="module")
def cluster(three_plus_controller):
    with KafkaAdmin(three_plus_controller.bootstrap_servers) as admin:
        before = set(admin.topic_names())
    yield three_plus_controller
    faults = EmbeddedFaults(three_plus_controller)
    faults.bring_back()
    faults.wait_healthy(HEALED_S)
    with KafkaAdmin(three_plus_controller.bootstrap_servers) as admin:
        for topic in set(admin.topic_names()) - before:
            if not topic.startswith("__"):
                admin.delete_topic(topic)


@pytest.fixture(autouse=True)
def every_node_running(cluster):
    yield
    EmbeddedFaults(cluster).bring_back()

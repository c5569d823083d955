"""A 3-broker embedded cluster and its fault hooks: kill, restart, pause, resume, leader lookup."""


import psutil
import pytest

from kafkabench.admin import KafkaAdmin
from kafkabench.cluster import EmbeddedCluster
from kafkabench.errors import ClusterError, KafkaAdminError

from tests.conftest import isr_of, three_brokers, wait_for, write_acks_all

pytestmark = [pytest.mark.integration, pytest.mark.multibroker]

@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    with three_brokers(tmp_path_factory.mktemp("three")) as c:
        yield c


@pytest.fixture
def replicated_topic(cluster, topic_name):
    with KafkaAdmin(cluster.bootstrap_servers) as admin:
        admin.create_topic(topic_name, partitions=1, replication_factor=3)
    return topic_name


def brokers_seen_by(port: int) -> set[int]:
    """The live brokers in the metadata served by the broker on `port` itself (empty if it does not answer)."""
    try:
        with KafkaAdmin(f"127.0.0.1:{port}", timeout_s=2) as direct:
            return set(direct.brokers(timeout_s=2))
    except KafkaAdminError:
        return set()


def test_status_lists_three_running_brokers(cluster):
    status = cluster.status()
    assert [b.id for b in status.brokers] == [1, 2, 3]
    assert all(b.alive and b.state == "running" and psutil.pid_exists(b.pid) for b in status.brokers)
    assert status.bootstrap_servers.count("127.0.0.1:") == 3


def test_killed_leader_is_replaced_and_acks_all_writes_go_on_then_restart_restores_isr(cluster, replicated_topic):
    leader = cluster.leader_of(replicated_topic, 0)
    assert leader in (1, 2, 3)
    cluster.kill_broker(leader)
    assert cluster.status().brokers[leader - 1].state == "dead"

    new_leader = wait_for(lambda: (now := cluster.leader_of(replicated_topic, 0)) not in (None, leader) and now, 30, "a new leader")
    assert new_leader != leader
    assert write_acks_all(cluster.live_bootstrap_servers(), replicated_topic) == []
    assert leader not in isr_of(cluster, replicated_topic)

    cluster.restart_broker(leader)
    assert cluster.status().brokers[leader - 1].state == "running"
    wait_for(lambda: isr_of(cluster, replicated_topic) == {1, 2, 3}, 60, "the ISR to be back to 3")
    assert write_acks_all(cluster.bootstrap_servers, replicated_topic) == []


def test_paused_broker_answers_nothing_until_resumed(cluster, replicated_topic):
    victim = cluster.leader_of(replicated_topic, 0)
    port = cluster.state.node(victim).port
    cluster.pause_broker(victim)
    try:
        assert cluster.status().brokers[victim - 1].state == "paused"
        assert brokers_seen_by(port) == set()  # the process is frozen: no metadata answer
        # the rest of the cluster fences it and keeps taking acks=all writes
        wait_for(lambda: cluster.leader_of(replicated_topic, 0) not in (None, victim), 30, "leadership to move")
        assert write_acks_all(cluster.live_bootstrap_servers(), replicated_topic) == []
    finally:
        cluster.resume_broker(victim)
    assert cluster.status().brokers[victim - 1].state == "running"
    wait_for(lambda: victim in brokers_seen_by(port), 30, "the resumed broker to answer and be unfenced")
    wait_for(lambda: isr_of(cluster, replicated_topic) == {1, 2, 3}, 60, "the resumed broker to rejoin the ISR")


def test_fault_hooks_reject_unknown_and_dead_brokers(cluster):
    with pytest.raises(ClusterError, match="no node 9 in this cluster; its nodes are 1, 2, 3"):
        cluster.kill_broker(9)


def test_stop_leaves_no_process(tmp_path):
    cluster = EmbeddedCluster(brokers=1, directory=tmp_path)
    with cluster:
        pids = [b.pid for b in cluster.status().brokers]
        assert all(psutil.pid_exists(pid) for pid in pids)
    for pid in pids:
        assert not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    assert not (tmp_path / "cluster.json").exists()

"""The Faults seam on a real 3-broker embedded cluster: leaders, kill, restart, pause, resume, health."""

import time
import uuid

import psutil
import pytest

from kafkabench.admin import KafkaAdmin
from kafkabench.cluster.faults import PROBE_TIMEOUT_S, EmbeddedFaults, Faults
from kafkabench.errors import WaitTimeout

from tests.conftest import isr_of, three_brokers, wait_for

pytestmark = [pytest.mark.integration, pytest.mark.multibroker]

@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    with three_brokers(tmp_path_factory.mktemp("faults")) as c:
        yield c


@pytest.fixture(scope="module")
def faults(cluster) -> Faults:
    return EmbeddedFaults(cluster)


@pytest.fixture(scope="module")
def topic(cluster) -> str:
    name = f"faults-{uuid.uuid4().hex[:12]}"
    with KafkaAdmin(cluster.bootstrap_servers) as admin:
        admin.create_topic(name, partitions=2, replication_factor=3, config={"min.insync.replicas": "2"})
    return name


def test_leader_of_gives_a_broker_id_and_a_healthy_cluster_passes_at_once(faults, topic):
    assert faults.leader_of(topic, 0) in (1, 2, 3)
    assert faults.leader_of(topic, 1) in (1, 2, 3)
    started = time.monotonic()
    faults.wait_healthy(30)  # every topic, the internal probe topic included
    faults.wait_healthy(30, topics=[topic])
    # at once: both calls in less than half the 30 s either may wait; a look is a few admin connections, which even a
    # loaded machine makes in a few seconds
    assert time.monotonic() - started < 15


def test_broker_pids_lists_the_three_live_jvms(cluster, faults):
    pids = faults.broker_pids()
    assert sorted(pids) == [1, 2, 3]
    assert pids == {b.id: b.pid for b in cluster.status().brokers}
    assert all(psutil.Process(pid).name().startswith("java") for pid in pids.values())


def test_killed_leader_is_replaced_health_times_out_naming_the_partition_and_restart_heals(faults, topic):
    leader = faults.leader_of(topic, 0)
    faults.kill(leader)
    assert leader not in faults.broker_pids() and len(faults.broker_pids()) == 2

    wait_for(lambda: faults.leader_of(topic, 0) not in (None, leader), 30, "a new leader of partition 0")
    started = time.monotonic()
    with pytest.raises(WaitTimeout) as caught:
        faults.wait_healthy(3, topics=[topic])
    # bounded: it ends at most one look past its deadline, and a look makes an admin call to each live broker and one
    # for the partitions, each bounded by PROBE_TIMEOUT_S (slack for a loaded machine: one more look)
    one_look_s = (len(faults.broker_pids()) + 1) * PROBE_TIMEOUT_S
    assert time.monotonic() - started < 3 + 2 * one_look_s
    message = str(caught.value)
    assert message.startswith("timed out after 3 s waiting for a healthy cluster: ")
    assert f"broker {leader} is dead" in message
    assert f"{topic}[0] is under-replicated" in message and "\n" not in message

    faults.restart(leader)
    faults.wait_healthy(60, topics=[topic])
    assert len(faults.broker_pids()) == 3


def test_paused_follower_drops_out_of_the_isr_and_rejoins_once_resumed(cluster, faults, topic):
    follower = next(b for b in (1, 2, 3) if b != faults.leader_of(topic, 0))
    faults.pause(follower)
    try:
        assert cluster.status().brokers[follower - 1].state == "paused"
        wait_for(lambda: follower not in isr_of(cluster, topic), 30, f"broker {follower} to drop out of the ISR")
        with pytest.raises(WaitTimeout, match=f"broker {follower} is paused"):
            faults.wait_healthy(1, topics=[topic])
    finally:
        faults.resume(follower)
    faults.wait_healthy(60, topics=[topic])
    assert isr_of(cluster, topic) == {1, 2, 3}

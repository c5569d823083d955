"""3 brokers beside a dedicated controller: losing brokers never loses the quorum, so a partition shrinks its
ISR and refuses acks=all writes below min.insync.replicas, as a production cluster does."""

import pytest

from kafkabench.admin import KafkaAdmin
from kafkabench.cluster.faults import EmbeddedFaults

from tests.conftest import isr_of, wait_for, write_acks_all

pytestmark = [pytest.mark.integration, pytest.mark.multibroker]


def test_brokers_and_controller_apart_and_a_durable_topic_refusing_writes_with_two_brokers_down(cluster, topic_name):
    status = cluster.status()
    assert status.layout == "3 brokers + 1 controller"
    assert [b.roles for b in status.brokers] == ["broker"] * 3 and [c.id for c in status.controllers] == [101]
    assert cluster.broker_ids() == [1, 2, 3] and cluster.controller_ids() == [101]
    with KafkaAdmin(cluster.bootstrap_servers) as admin:
        assert sorted(admin.brokers()) == [1, 2, 3]  # the controller serves no clients
        admin.create_topic(topic_name, partitions=1, replication_factor=3, config={"min.insync.replicas": "2"})
    assert write_acks_all(cluster.bootstrap_servers, topic_name) == []

    leader = cluster.leader_of(topic_name)
    followers = [b for b in cluster.broker_ids() if b != leader]
    cluster.kill_broker(followers[0])
    assert write_acks_all(cluster.live_bootstrap_servers(), topic_name) == []  # 2 in sync >= min.insync
    cluster.kill_broker(followers[1])
    # the controller fences both and the ISR shrinks to the leader (with combined nodes the quorum was
    # gone with them and the ISR stayed [1,2,3]); the leader then refuses at once: no timeout, no guess
    wait_for(lambda: isr_of(cluster, topic_name) == {leader}, 30, "the ISR to shrink to the leader")
    assert write_acks_all(cluster.live_bootstrap_servers(), topic_name, count=1, retries=0) == ["NOT_ENOUGH_REPLICAS"]

    for broker in followers:
        cluster.restart_broker(broker)
    cluster.restart_broker(101)  # the quorum's only voter, back on the same data
    EmbeddedFaults(cluster).wait_healthy(60, topics=[topic_name])
    assert write_acks_all(cluster.bootstrap_servers, topic_name) == []

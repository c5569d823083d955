"""3 brokers beside a dedicated controller: losing brokers never loses the quorum, so a partition shrinks its
ISR and refuses acks=all writes below min.insync.replicas, as a production cluster does."""

import pytest
from confluent_kafka import Producer

from kafkabench.admin import KafkaAdmin, quiet_client_config
from kafkabench.cluster.faults import EmbeddedFaults
from kafkabench.waiting import wait_until

from tests.conftest import three_brokers

pytestmark = [pytest.mark.integration, pytest.mark.multibroker]


def isr_of(cluster, topic: str) -> set[int]:
    with KafkaAdmin(cluster.live_bootstrap_servers(), timeout_s=5) as admin:
        return set(admin.describe_topic(topic).partitions[0].isr)


def write_acks_all(bootstrap: str, topic: str, timeout_s: float = 20) -> list[str]:
    producer = Producer(quiet_client_config(bootstrap, acks="all", **{"message.timeout.ms": int(timeout_s * 1000),
                                                                      "retries": 0}))
    errors: list[str] = []
    producer.produce(topic, b"v", on_delivery=lambda err, _msg: err and errors.append(err.name()))
    remaining = producer.flush(timeout_s + 5)
    return errors + ["unacknowledged"] * remaining


def test_brokers_and_controller_apart_and_a_durable_topic_refusing_writes_with_two_brokers_down(tmp_path, topic_name):
    with three_brokers(tmp_path, controllers=1) as cluster:
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
        wait_until(lambda: isr_of(cluster, topic_name) == {leader}, timeout_s=30, what="the ISR to shrink to the leader")
        assert write_acks_all(cluster.live_bootstrap_servers(), topic_name) == ["NOT_ENOUGH_REPLICAS"]

        for broker in followers:
            cluster.restart_broker(broker)
        cluster.restart_broker(101)  # the quorum's only voter, back on the same data
        EmbeddedFaults(cluster).wait_healthy(60, topics=[topic_name])
        assert write_acks_all(cluster.bootstrap_servers, topic_name) == []

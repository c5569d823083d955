"""`KafkaAdmin.offsets` while partition leaders move: an admin that knew the old leaders still gives every partition's
offsets as they are, within its bound, whether the leader was killed, frozen or handed its leadership back."""

import pytest

from kafkabench.admin import KafkaAdmin
from kafkabench.cluster.faults import EmbeddedFaults

from tests.conftest import wait_for, write_acks_all

pytestmark = [pytest.mark.integration, pytest.mark.multibroker]

PARTITIONS = 3


@pytest.fixture
def written(cluster, topic_name) -> tuple[str, dict[int, tuple[int, int]]]:
    """A topic on every broker with records in it, and its offsets read while nothing moved."""
    with KafkaAdmin(cluster.bootstrap_servers) as admin:
        admin.create_topic(topic_name, partitions=PARTITIONS, replication_factor=3, config={"min.insync.replicas": "2"})
    assert write_acks_all(cluster.bootstrap_servers, topic_name, count=60) == []
    with KafkaAdmin(cluster.bootstrap_servers) as admin:
        offsets = admin.offsets(topic_name)
    assert sum(end - earliest for earliest, end in offsets.values()) == 60
    return topic_name, offsets


def moved(cluster, topic: str, partition: int, away_from: int) -> int:
    return wait_for(lambda: (now := cluster.leader_of(topic, partition)) not in (None, away_from) and now, 30,
                    f"partition {partition} of {topic} to get a leader other than broker {away_from}")


def test_offsets_asked_of_a_killed_leader_come_from_the_next_one(cluster, written):
    topic, before = written
    with KafkaAdmin(cluster.bootstrap_servers, timeout_s=30) as admin:
        admin.describe_topic(topic)  # its metadata names the leader about to die
        leader = cluster.leader_of(topic, 0)
        cluster.kill_broker(leader)
        assert admin.offsets(topic) == before  # librdkafka alone answers -1001 for partition 0 after its timeout
        assert cluster.leader_of(topic, 0) != leader


def test_offsets_asked_of_a_frozen_leader_come_from_the_next_one(cluster, written):
    topic, before = written
    with KafkaAdmin(cluster.bootstrap_servers, timeout_s=30) as admin:
        admin.describe_topic(topic)
        leader = cluster.leader_of(topic, 1)
        cluster.pause_broker(leader)
        try:
            assert admin.offsets(topic) == before
        finally:
            cluster.resume_broker(leader)


def test_offsets_after_the_leadership_is_handed_back_are_asked_of_the_new_leader(cluster, written):
    topic, before = written
    faults = EmbeddedFaults(cluster)
    with KafkaAdmin(cluster.bootstrap_servers, timeout_s=30) as admin:
        preferred = cluster.leader_of(topic, 0)
        cluster.kill_broker(preferred)
        moved(cluster, topic, 0, away_from=preferred)
        assert admin.offsets(topic) == before  # its metadata now names the stand-in
        faults.bring_back()
        faults.wait_healthy(60, topics=[topic])
        admin.elect_preferred_leaders(topic, list(range(PARTITIONS)))
        wait_for(lambda: cluster.leader_of(topic, 0) == preferred, 30, f"broker {preferred} to lead partition 0 again")
        # the stand-in it still names answers FENCED_LEADER_EPOCH (librdkafka alone says so for as long as one asks)
        assert admin.offsets(topic) == before


def test_offsets_of_a_topic_asked_as_it_is_created_wait_for_its_leaders(cluster, topic_name):
    with KafkaAdmin(cluster.bootstrap_servers, timeout_s=30) as admin:
        admin.create_topic(topic_name, partitions=PARTITIONS, replication_factor=3, wait=False)
        # the brokers learn of it one by one: unknown at first, then without a leader, then led
        assert admin.offsets(topic_name) == {p: (0, 0) for p in range(PARTITIONS)}

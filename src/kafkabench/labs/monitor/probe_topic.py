"""The probe topic: at least one partition led by each broker, so that every broker's health shows in its probes.

Replicas are placed explicitly, partition i on brokers (b_i, b_i+1, ...) of the sorted broker list, its preferred
leader first; replication factor min(3, brokers), min.insync.replicas min(2, RF), as a durable topic would have.
When a broker leads none of the partitions it prefers (leadership drifted after a restart), the preferred leaders are
elected again; when brokers were added, partitions are added for them.
"""

from __future__ import annotations

from kafkabench.admin import KafkaAdmin, TopicInfo
from kafkabench.errors import KafkaAdminError


def placement(brokers: list[int]) -> list[list[int]]:
    """Partition i's replicas: broker i of the sorted list first, then the next ones around."""
    ordered = sorted(brokers)
    factor = min(3, len(ordered))
    return [[ordered[(i + k) % len(ordered)] for k in range(factor)] for i in range(len(ordered))]


def ensure_probe_topic(admin: KafkaAdmin, topic: str) -> TopicInfo:
    """Create the probe topic, or bring it back in shape: a partition preferred by each broker, led by it."""
    brokers = sorted(admin.brokers())
    wanted = placement(brokers)
    if topic not in admin.topic_names():
        factor = len(wanted[0])
        return admin.create_topic(topic, replica_assignment=wanted, config={"min.insync.replicas": str(min(2, factor))})
    info = admin.describe_topic(topic)
    preferred = {p.replicas[0] for p in info.partitions if p.replicas}
    missing = [replicas for replicas in wanted if replicas[0] not in preferred]
    if missing:
        admin.add_partitions(topic, missing)
        info = admin.wait_until_usable(topic)
    drifted = [p.partition for p in info.partitions if p.replicas and p.leader != p.replicas[0]
               and p.replicas[0] in brokers]
    if drifted:
        try:
            admin.elect_preferred_leaders(topic, drifted)
        except KafkaAdminError:
            pass  # the preferred leader is not in the ISR yet: the next look tries again
        info = admin.describe_topic(topic)
    return info

"""A lab's fresh topic as the cluster has it: replication factor and min.insync.replicas read back through the
admin API, not trusted from the request (a broker default or a cap could change them silently)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from kafkabench.admin import KafkaAdmin
from kafkabench.connection import Connection
from kafkabench.errors import KafkaAdminError, KafkabenchError
from kafkabench.waiting import wait_until

CONFIGS_KNOWN_S = 10  # a new topic's configs are served by every broker within this


def verified_topic(admin: KafkaAdmin, topic: str, replication_factor: int, min_isr: int) -> list[dict]:
    """The topic's partitions (leader, replicas, ISR) once its replication factor and min.insync.replicas are
    the ones asked; raises KafkabenchError naming both when they are not."""
    info = admin.wait_until_usable(topic)  # a broker that has not heard of the new topic yet is asked again
    configs = wait_until(lambda: _configs_if_known(admin, topic), timeout_s=CONFIGS_KNOWN_S,
                         what=f"the configs of the new topic {topic} to be served")
    if info.replication_factor != replication_factor or configs.get("min.insync.replicas") != str(min_isr):
        raise KafkabenchError(f"topic {topic} came out with RF {info.replication_factor} and min.insync.replicas "
                              f"{configs.get('min.insync.replicas')}, asked {replication_factor} and {min_isr}")
    return [{"partition": p.partition, "leader": p.leader, "replicas": list(p.replicas), "isr": list(p.isr)}
            for p in info.partitions]


@contextlib.contextmanager
def fresh_topic(bootstrap: str | Connection, topic: str, partitions: int, replication_factor: int, min_isr: int,
                configs: dict[str, str], timeout_s: float) -> Iterator[list[dict]]:
    """A new topic, verified (its partitions' description is yielded), deleted on the way out whatever happened."""
    with KafkaAdmin(bootstrap, timeout_s=timeout_s) as admin:
        admin.create_topic(topic, partitions, replication_factor, configs)
        try:
            yield verified_topic(admin, topic, replication_factor, min_isr)
        finally:
            try:
                admin.delete_topic(topic)
            except KafkabenchError:
                pass


def _configs_if_known(admin: KafkaAdmin, topic: str) -> dict[str, str] | None:
    """None while the broker asked has not heard of the new topic yet (its metadata arrives a moment later)."""
    try:
        return admin.topic_configs(topic)
    except KafkaAdminError as exc:
        if "Unknown topic or partition" in str(exc):
            return None
        raise

"""Share groups (KIP-932) in the groups lab (`--group-type share`): the cluster's feature level and the group's own
settings (what the histories say of redelivery is in labs.groups.figures).

- The cluster: share groups need `share.version` 1 or more. Kafka 4.1 formats a cluster at 0, 4.2 turns them on by
  default. On a cluster kafkabench runs, a level of 0 is raised to 1 (Apache Kafka's FeatureCommand) and said; any
  other cluster without them is refused, with the command that turns them on, before any process starts.
- The group: `share.auto.offset.reset=earliest` (a share group reads from the latest offset by default: records
  written before a member first fetched would be skipped), and `share.record.lock.duration.ms` from `--lock-s`.
"""

from __future__ import annotations

from kafkabench.admin import KafkaAdmin
from kafkabench.cluster import features
from kafkabench.core.events import Listener
from kafkabench.errors import ConfigError, KafkabenchError

SHARE_VERSION = "share.version"


def share_groups_on(target, listener: Listener) -> str:
    """What the cluster's share.version was, and what the run did about it (in the result's params)."""
    with KafkaAdmin(target.connection, timeout_s=30) as admin:
        level = admin.feature_level(SHARE_VERSION) or 0
    if level >= 1:
        return f"{SHARE_VERSION} {level}: share groups on"
    if not target.started_here:
        raise ConfigError(f"share groups are off on this cluster ({SHARE_VERSION} {level}): turn them on with "
                          f"`kafka-features.sh --bootstrap-server {target.bootstrap_servers} upgrade --feature "
                          f"{SHARE_VERSION}=1` (Kafka 4.1; on by default from 4.2), then run again")
    try:
        features.set_level(target.connection, SHARE_VERSION, 1, 30)
    except KafkabenchError as exc:
        raise ConfigError(f"the embedded Kafka {target.kafka_version} has no share groups ({SHARE_VERSION} {level}, "
                          f"and {exc}): give --kafka-version 4.1.2 or later") from exc
    said = f"{SHARE_VERSION} was {level}: kafkabench raised it to 1 on the cluster it runs"
    listener.note(said)
    return said


def share_group_settings(target, group: str, lock_s: float | None) -> None:
    """The group's own settings, before its first member starts."""
    settings = {"share.auto.offset.reset": "earliest"}
    if lock_s is not None:
        settings["share.record.lock.duration.ms"] = str(round(lock_s * 1000))
    with KafkaAdmin(target.connection, timeout_s=30) as admin:
        try:
            admin.set_group_config(group, settings)
        except KafkabenchError as exc:
            raise ConfigError(f"{exc} (the broker bounds the lock by group.share.min.record.lock.duration.ms and "
                              f"group.share.max.record.lock.duration.ms)") from exc

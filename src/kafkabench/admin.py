"""Admin helpers every lab uses, for the embedded cluster and any external one alike.

Topic operations go through confluent-kafka's AdminClient. Bytes stored per partition come from the
DescribeLogDirs API, which librdkafka does not expose; kafka-python's admin client does.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field

from confluent_kafka import Consumer, ElectionType, KafkaError, KafkaException, TopicCollection, TopicPartition
from confluent_kafka.admin import AdminClient, AlterConfigOpType, ConfigEntry, ConfigResource, NewPartitions, NewTopic, \
    OffsetSpec, ResourceType

from kafkabench.connection import Connection
from kafkabench.errors import KafkaAdminError, WaitTimeout
from kafkabench.waiting import wait_until

_QUIET = logging.getLogger("kafkabench.librdkafka")
_QUIET.addHandler(logging.NullHandler())
_QUIET.propagate = False

# what a partition's leadership moving (a leader stopped, frozen or just elected, a topic just created) answers
# ListOffsets with; the same request gets past it once librdkafka's metadata names the partition's leader now
RETRIABLE_OFFSETS_ERRORS = frozenset({
    KafkaError.NOT_LEADER_FOR_PARTITION, KafkaError.LEADER_NOT_AVAILABLE, KafkaError.UNKNOWN_TOPIC_OR_PART,
    KafkaError.REPLICA_NOT_AVAILABLE, KafkaError.OFFSET_NOT_AVAILABLE, KafkaError.FENCED_LEADER_EPOCH,
    KafkaError.UNKNOWN_LEADER_EPOCH, KafkaError.KAFKA_STORAGE_ERROR, KafkaError.REQUEST_TIMED_OUT,
    KafkaError.NETWORK_EXCEPTION, KafkaError._TRANSPORT, KafkaError._TIMED_OUT,
    KafkaError._NOENT, KafkaError._UNKNOWN_TOPIC, KafkaError._UNKNOWN_PARTITION,  # not in librdkafka's cache yet
})
# one ListOffsets attempt's bound: a live leader answers in milliseconds, a dead or frozen one never, and the cluster
# elects another once it stops hearing from it (broker.session.timeout.ms, 9 s by default); the next attempt asks that one
OFFSETS_ATTEMPT_S = 5.0


def quiet_client_config(cluster: str | Connection, **extra: object) -> dict:
    """confluent-kafka settings for `cluster` (bootstrap servers, or a connection with its security settings) that
    keep librdkafka's connection chatter out of the user's terminal."""
    connection = cluster if isinstance(cluster, Connection) else Connection(cluster)
    return {"bootstrap.servers": connection.bootstrap_servers, "logger": _QUIET, **connection.librdkafka(), **extra}


CREATE_BATCH = 500  # topics to a CreateTopics/DeleteTopics request
PARTITIONS_PER_REQUEST = 5000  # below KRaft's 10,000 records an operation, a partition taking one or two


@dataclass(frozen=True)
class PartitionInfo:
    partition: int
    leader: int | None
    replicas: tuple[int, ...]
    isr: tuple[int, ...]


@dataclass(frozen=True)
class TopicInfo:
    name: str
    partitions: tuple[PartitionInfo, ...]
    configs: dict[str, str] = field(default_factory=dict)

    @property
    def replication_factor(self) -> int:
        return len(self.partitions[0].replicas) if self.partitions else 0

    def is_usable(self) -> bool:
        """Every partition has a leader and all its replicas in sync."""
        return bool(self.partitions) and all(
            p.leader is not None and set(p.isr) == set(p.replicas) for p in self.partitions
        )


@dataclass(frozen=True)
class ReplicaSize:
    broker: int
    partition: int
    size_bytes: int
    log_dir: str


class GroupLag:
    """How far a consumer group's committed offsets are behind the end of a topic, per partition, asked as often as
    needed through one consumer that never joins the group (a new client per look would cost a connection each).
    A partition the group has no offset for counts from 0. Each look is bounded by `timeout_s`; one that fails
    raises KafkaAdminError (a coordinator moving, a leader down) and the next may succeed. A group reading more
    topics (`more`: (topic, partitions) each) has their partitions numbered on after `topic`'s, one topic after the
    other, as its members number them."""

    def __init__(self, cluster: str | Connection, group: str, topic: str, partitions: int, timeout_s: float = 5,
                 more: Sequence[tuple[str, int]] = ()) -> None:
        connection = cluster if isinstance(cluster, Connection) else Connection(cluster)
        self.timeout_s, self._connection, self._group = timeout_s, connection, group
        self._partitions = [TopicPartition(name, p) for name, count in ((topic, partitions), *more)
                            for p in range(count)]
        self._keys = {(tp.topic, tp.partition): key for key, tp in enumerate(self._partitions)}
        # read_uncommitted: the offsets as committed, never held back by a transaction still open (a stalled
        # copier's), which read_committed's OffsetFetch waits on (KIP-447's require_stable)
        self._consumer = Consumer(quiet_client_config(connection, **{"group.id": group,
                                                                     "isolation.level": "read_uncommitted"}))

    def behind(self) -> dict[int, int]:
        try:
            committed = {self._keys[tp.topic, tp.partition]: max(0, tp.offset)
                         for tp in self._consumer.committed(self._partitions, timeout=self.timeout_s)}
            ends = {key: self._consumer.get_watermark_offsets(tp, timeout=self.timeout_s)[1]
                    for key, tp in enumerate(self._partitions)}
        except KafkaException as exc:
            raise KafkaAdminError(f"the group's offsets: {exc.args[0].str()}") from exc
        return {p: max(0, end - committed.get(p, 0)) for p, end in ends.items()}

    def unstable(self) -> str | None:
        """Why a read_committed member of the group cannot learn where to start (its OffsetFetch asks for stable
        offsets, KIP-447: the broker answers UNSTABLE_OFFSET_COMMIT while a transaction carrying offsets for a
        partition is open), or None when it can. One fetch, bounded by `timeout_s`."""
        consumer = Consumer(quiet_client_config(self._connection, **{"group.id": self._group,
                                                                     "isolation.level": "read_committed"}))
        try:
            found = consumer.committed(self._partitions, timeout=self.timeout_s)
        except KafkaException as exc:
            return (f"a read_committed member's offset fetch got no stable offsets within {self.timeout_s:g} s "
                    f"({exc.args[0].str()}): a transaction carrying the group's offsets is still open")
        finally:
            consumer.close()
        failed = [f"[{tp.partition}] {tp.error.str()}" for tp in found if tp.error is not None]
        return f"a read_committed member's offset fetch failed: {', '.join(failed)}" if failed else None

    def close(self) -> None:
        self._consumer.close()

    def __enter__(self) -> GroupLag:
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()


@dataclass(frozen=True)
class GroupState:
    """A consumer group as its coordinator describes it."""

    state: str  # STABLE, PREPARING_REBALANCING, COMPLETING_REBALANCING, EMPTY, DEAD, UNKNOWN
    members: int
    reconciling: int  # KIP-848 members whose assignment is not yet the broker's target for them
    protocol: str  # CLASSIC or CONSUMER

    @property
    def stable(self) -> bool:
        return self.state == "STABLE" and not self.reconciling

    @property
    def said(self) -> str:
        """The state in words: librdkafka's describe (2.16) reads a KIP-848 group's ASSIGNING and RECONCILING states
        as UNKNOWN."""
        state = "ASSIGNING or RECONCILING" if self.protocol == "CONSUMER" and self.state == "UNKNOWN" else self.state
        return f"{state}{f' ({self.reconciling} reconciling)' if self.reconciling else ''}, {self.members} members"


def _partitions(assignment) -> set[tuple[str, int]]:
    return {(tp.topic, tp.partition) for tp in assignment.topic_partitions or []}


class KafkaAdmin:
    """A thin, typed face over the admin APIs; every call is bounded by `timeout_s`."""

    def __init__(self, cluster: str | Connection, client_config: dict | None = None, timeout_s: float = 30) -> None:
        self.connection = cluster if isinstance(cluster, Connection) else Connection(cluster)
        self.bootstrap_servers = self.connection.bootstrap_servers
        self.timeout_s = timeout_s
        self._client_config = client_config or {}
        self._admin = AdminClient(quiet_client_config(self.connection, **self._client_config))

    def brokers(self, timeout_s: float | None = None) -> dict[int, str]:
        """Broker id -> host:port as the cluster's metadata lists them now."""
        metadata = self._call("list brokers", lambda: self._admin.list_topics(timeout=timeout_s or self.timeout_s))
        return {b.id: f"{b.host}:{b.port}" for b in metadata.brokers.values()}

    def topic_names(self) -> list[str]:
        """Every topic in the cluster's metadata, internal ones such as __consumer_offsets included."""
        metadata = self._call("list topics", lambda: self._admin.list_topics(timeout=self.timeout_s))
        return sorted(metadata.topics)

    def create_topic(
        self,
        name: str,
        partitions: int = 1,
        replication_factor: int = 1,
        config: dict[str, str] | None = None,
        wait: bool = True,
        replica_assignment: list[list[int]] | None = None,
        exist_ok: bool = False,
    ) -> TopicInfo | None:
        """`replica_assignment`: each partition's brokers, its preferred leader first (instead of the counts).
        `exist_ok`: a topic of that name already existing is no error. For a name made for the call (a uuid in it)
        it means this very request created it and its first answer was lost (librdkafka sends it again after a
        request timeout on a loaded broker); for a topic that should exist or be created, that it exists."""
        if replica_assignment:
            new = NewTopic(name, num_partitions=len(replica_assignment), replica_assignment=replica_assignment,
                           config=config or {})
        else:
            first = min(partitions, PARTITIONS_PER_REQUEST)  # the rest added after, as many a request
            new = NewTopic(name, num_partitions=first, replication_factor=replication_factor, config=config or {})
        future = self._admin.create_topics([new], operation_timeout=self.timeout_s, request_timeout=self.timeout_s)[name]
        try:
            self._call(f"create topic {name}", lambda: future.result(timeout=self.timeout_s + 5))
        except KafkaAdminError as exc:
            if not (exist_ok and isinstance(exc.__cause__, KafkaException)
                    and exc.__cause__.args[0].code() == KafkaError.TOPIC_ALREADY_EXISTS):
                raise
        if not replica_assignment and partitions > PARTITIONS_PER_REQUEST:
            self._grow(name, partitions)
        if not wait:
            return None
        info = self.wait_until_usable(name, self.timeout_s + partitions / 500)
        # each broker learns a new topic from the controller in its own time, and a client may ask any of them: a
        # caller's next question (a lab's describe, a test's) must not meet one that has not heard of it yet
        for broker, address in self.brokers().items():
            wait_until(lambda: self._knows(broker, address, name) is not False, timeout_s=self.timeout_s,
                       what=f"topic {name} in broker {broker}'s metadata", interval_s=0.05)
        return info

    def _knows(self, broker: int, address: str, name: str) -> bool | None:
        """Whether broker `broker`, at `address`, has topic `name` in its own metadata; None when it does not answer
        (a paused broker: not waited for). A fresh client asks its bootstrap broker first but may ask another it
        learnt of: only that broker's answer counts."""
        client = AdminClient(quiet_client_config(self.connection.at(address), **self._client_config))
        try:
            metadata = client.list_topics(name, timeout=2)
        except KafkaException:
            return None
        found = metadata.topics.get(name)
        if metadata.orig_broker_id != broker:
            return False  # asked again: the next fresh client asks it first
        return found is not None and found.error is None

    def _grow(self, name: str, partitions: int) -> None:
        """The topic from PARTITIONS_PER_REQUEST up to `partitions`, as many added a request: KRaft's controller
        refuses an operation of more than 10,000 records ("excessively large batch operation")."""
        for total in [*range(2 * PARTITIONS_PER_REQUEST, partitions, PARTITIONS_PER_REQUEST), partitions]:
            future = self._admin.create_partitions([NewPartitions(name, total)], request_timeout=self.timeout_s)[name]
            self._call(f"add partitions to {name} (to {total:,})",
                       lambda f=future: f.result(timeout=self.timeout_s + 5))

    def create_topics(self, names: list[str], partitions: int, replication_factor: int,
                      config: dict[str, str] | None = None, batch: int = CREATE_BATCH) -> None:
        """Many topics alike, `batch` to a CreateTopics request (an existing one is no error), then waited for
        until every partition has a leader and its full ISR, all read in one metadata request per try."""
        batch = max(1, min(batch, PARTITIONS_PER_REQUEST // partitions))  # a partition is a record of the request
        for first in range(0, len(names), batch):
            news = [NewTopic(name, num_partitions=min(partitions, PARTITIONS_PER_REQUEST),
                             replication_factor=replication_factor, config=config or {})
                    for name in names[first:first + batch]]
            futures = self._admin.create_topics(news, operation_timeout=self.timeout_s, request_timeout=self.timeout_s)
            for name, future in futures.items():
                try:
                    self._call(f"create topic {name}", lambda f=future: f.result(timeout=self.timeout_s + 5))
                except KafkaAdminError as exc:
                    if not (isinstance(exc.__cause__, KafkaException)
                            and exc.__cause__.args[0].code() == KafkaError.TOPIC_ALREADY_EXISTS):
                        raise
        if partitions > PARTITIONS_PER_REQUEST:
            for name in names:
                self._grow(name, partitions)
        wanted = set(names)

        def all_usable() -> bool:
            try:
                metadata = self._admin.list_topics(timeout=self.timeout_s)
            except KafkaException:
                return False
            found = {name: topic for name, topic in metadata.topics.items() if name in wanted}
            return len(found) == len(wanted) and all(
                topic.error is None and topic.partitions and all(p.leader >= 0 and set(p.isrs) == set(p.replicas)
                                                                 for p in topic.partitions.values())
                for topic in found.values())

        wait_until(all_usable, timeout_s=self.timeout_s + len(names) / 50, what=f"{len(names)} topics to have leaders "
                   "and full ISRs", hint="check that enough brokers are alive (`kafkabench cluster status`)",
                   interval_s=0.2)

    def delete_topics(self, names: list[str], batch: int = CREATE_BATCH) -> None:
        """Many topics, `batch` to a DeleteTopics request; one already gone is no error."""
        for first in range(0, len(names), batch):
            futures = self._admin.delete_topics(names[first:first + batch], operation_timeout=self.timeout_s,
                                                request_timeout=self.timeout_s)
            for name, future in futures.items():
                try:
                    future.result(timeout=self.timeout_s + 5)
                except KafkaException as exc:
                    if exc.args[0].code() != KafkaError.UNKNOWN_TOPIC_OR_PART:
                        raise KafkaAdminError(f"delete topic {name} failed: {exc.args[0].str()}") from exc

    def delete_topic(self, name: str, missing_ok: bool = True) -> None:
        future = self._admin.delete_topics([name], operation_timeout=self.timeout_s, request_timeout=self.timeout_s)[name]
        try:
            future.result(timeout=self.timeout_s + 5)
        except KafkaException as exc:
            if missing_ok and exc.args[0].code() == KafkaError.UNKNOWN_TOPIC_OR_PART:
                return
            raise KafkaAdminError(f"delete topic {name} failed: {exc.args[0].str()}") from exc

    def add_partitions(self, name: str, assignment: list[list[int]] | int) -> None:
        """New partitions at the end of the topic: each on these brokers (its preferred leader first), or as many as
        given, placed by the controller."""
        added, placed = (assignment, {}) if isinstance(assignment, int) else \
            (len(assignment), {"replica_assignment": assignment})
        total = len(self.describe_topic(name).partitions) + added
        future = self._admin.create_partitions([NewPartitions(name, total, **placed)],
                                               request_timeout=self.timeout_s)[name]
        self._call(f"add partitions to {name}", lambda: future.result(timeout=self.timeout_s + 5))

    def elect_preferred_leaders(self, name: str, partitions: list[int]) -> None:
        """Give each partition back to its preferred leader (the first of its replicas), where that broker is alive."""
        # no request_timeout keyword: confluent-kafka 2.16's elect_leaders fails on any keyword argument
        future = self._admin.elect_leaders(ElectionType.PREFERRED, [TopicPartition(name, p) for p in partitions])
        self._call(f"elect the preferred leaders of {name}", lambda: future.result(timeout=self.timeout_s + 5))

    def delete_records(self, name: str, partition: int, before: int) -> None:
        """Delete the partition's records below offset `before` (DeleteRecords): what a test plants as loss."""
        futures = self._admin.delete_records([TopicPartition(name, partition, before)], request_timeout=self.timeout_s)
        for future in futures.values():
            self._call(f"delete records of {name}[{partition}] below {before}", lambda f=future: f.result(timeout=self.timeout_s + 5))

    def describe_topic(self, name: str, with_configs: bool = False) -> TopicInfo:
        """Partitions with leader, replicas and ISR, from the metadata any live broker serves."""
        metadata = self._call(f"describe topic {name}", lambda: self._admin.list_topics(topic=name, timeout=self.timeout_s))
        topic = metadata.topics.get(name)
        if topic is None or topic.error is not None:
            reason = topic.error.str() if topic is not None else "not in the metadata"
            raise KafkaAdminError(f"describe topic {name} failed: {reason}")
        partitions = tuple(
            PartitionInfo(partition=p.id, leader=p.leader if p.leader >= 0 else None, replicas=tuple(p.replicas), isr=tuple(p.isrs))
            for p in sorted(topic.partitions.values(), key=lambda p: p.id)
        )
        return TopicInfo(name, partitions, self.topic_configs(name) if with_configs else {})

    def topic_id(self, name: str) -> str:
        """The topic's id as Kafka writes it (URL-safe base64): newer clients name a topic by it in their requests."""
        future = self._admin.describe_topics(TopicCollection([name]), request_timeout=self.timeout_s)[name]
        description = self._call(f"describe topic {name}", lambda: future.result(timeout=self.timeout_s + 5))
        return str(description.topic_id).replace("+", "-").replace("/", "_").rstrip("=")

    def topic_configs(self, name: str) -> dict[str, str]:
        return self._configs(ConfigResource(ConfigResource.Type.TOPIC, name), name)

    def broker_configs(self, broker_id: int) -> dict[str, str]:
        """A broker's settings as it runs with them, its dynamic ones and defaults included."""
        return self._configs(ConfigResource(ConfigResource.Type.BROKER, str(broker_id)), f"broker {broker_id}")

    def _configs(self, resource: ConfigResource, name: str) -> dict[str, str]:
        future = self._admin.describe_configs([resource], request_timeout=self.timeout_s)[resource]
        entries = self._call(f"describe configs of {name}", lambda: future.result(timeout=self.timeout_s + 5))
        return {key: entry.value for key, entry in entries.items()}

    def offsets(self, name: str) -> dict[int, tuple[int, int]]:
        """partition -> (earliest, end) offset, as the partition leaders have them now. While a partition's leadership
        moves it is asked again, within `timeout_s`; an error asking again cannot mend fails at once."""
        query = _OffsetsQuery(self._admin, name, deadline=time.monotonic() + self.timeout_s,
                              fresh=lambda: AdminClient(quiet_client_config(self.connection, **self._client_config)))
        try:
            return wait_until(query.attempt, timeout_s=self.timeout_s, what=f"the offsets of {name}", interval_s=0.2)
        except WaitTimeout:
            raise KafkaAdminError(f"list offsets of {name} failed: no answer within {self.timeout_s:g} s "
                                  f"({query.problem}); check that the topic exists and every partition has a live leader "
                                  "(`kafkabench cluster status`)") from None

    def committed(self, group: str, name: str) -> dict[int, int]:
        """partition -> the group's committed offset, for the partitions of `name` it has one for. Asked with a
        consumer that never joins the group (the admin call crashes confluent-kafka 2.16 for an unknown group);
        asked again while the group's coordinator is still being found."""
        partitions = [TopicPartition(name, p.partition) for p in self.describe_topic(name).partitions]
        consumer = Consumer(quiet_client_config(self.connection, **{**self._client_config, "group.id": group}))

        def offsets() -> list[TopicPartition] | None:
            try:
                return consumer.committed(partitions, timeout=self.timeout_s)
            except KafkaException as exc:
                if exc.args[0].code() in (KafkaError.NOT_COORDINATOR, KafkaError.COORDINATOR_LOAD_IN_PROGRESS,
                                          KafkaError.COORDINATOR_NOT_AVAILABLE):
                    return None
                raise KafkaAdminError(f"reading the offsets of group {group} failed: {exc.args[0].str()}") from exc

        try:
            found = wait_until(offsets, timeout_s=self.timeout_s, what=f"the coordinator of group {group}", interval_s=0.2)
        finally:
            consumer.close()
        return {tp.partition: tp.offset for tp in found if tp.offset >= 0}

    def group_state(self, group: str) -> GroupState:
        """The group as its coordinator sees it (DescribeGroups, or ConsumerGroupDescribe for a KIP-848 group)."""
        future = self._admin.describe_consumer_groups([group], request_timeout=self.timeout_s)[group]
        found = self._call(f"describe group {group}", lambda: future.result(timeout=self.timeout_s))
        # a KIP-848 member is reconciled once it holds what the broker targets for it
        reconciling = sum(1 for m in found.members if m.target_assignment is not None and m.assignment is not None and
                          _partitions(m.target_assignment) != _partitions(m.assignment))
        state = found.state.name if found.state is not None else "UNKNOWN"
        return GroupState(state, len(found.members), reconciling, getattr(found.type, "name", "UNKNOWN"))

    def coordinator(self, kind: str, key: str) -> int:
        """The broker coordinating a transactional id (`kind` "transaction") or a consumer group ("group"): the leader
        of the key's partition of __transaction_state or __consumer_offsets, which Kafka picks as
        abs(key.hashCode()) % the topic's partitions."""
        topic = {"transaction": "__transaction_state", "group": "__consumer_offsets"}[kind]
        partitions = self.describe_topic(topic).partitions
        leader = partitions[java_string_hash(key) % len(partitions)].leader
        if leader is None or leader < 0:
            raise KafkaAdminError(f"the {kind} coordinator of {key}: {topic} has no leader for it now")
        return leader

    def wait_until_usable(self, name: str, timeout_s: float | None = None) -> TopicInfo:
        def usable() -> TopicInfo | None:
            try:
                info = self.describe_topic(name)
            except KafkaAdminError:
                return None  # metadata may lag the create on other brokers
            return info if info.is_usable() else None

        return wait_until(usable, timeout_s=timeout_s or self.timeout_s, what=f"topic {name} to have a leader and full ISR",
                          hint="check that enough brokers are alive (`kafkabench cluster status`)", interval_s=0.05)

    def stored_bytes(self, name: str) -> list[ReplicaSize]:
        """Bytes on disk of every replica of the topic, per broker and partition (DescribeLogDirs)."""
        responses = self._kafka_python("describe log dirs", f"describe log dirs of {name}",
                                       lambda client: client.describe_log_dirs(topic_partitions=[name]))
        return sorted(_replica_sizes(responses, name), key=lambda r: (r.partition, r.broker))

    def set_broker_logger(self, broker_id: int, logger: str, level: str) -> None:
        """One broker's log4j logger at `level` from now on, until it restarts (AlterConfigs on the BROKER_LOGGER
        resource, which librdkafka's admin API lacks: kafka-python's, incremental where the broker has it)."""
        from kafka.admin import ConfigResource, ConfigResourceType

        resource = ConfigResource(ConfigResourceType.BROKER_LOGGER, str(broker_id), configs={logger: level})
        answer = self._kafka_python("set a broker logger", f"setting {logger}={level} on broker {broker_id}",
                                    lambda client: client.alter_configs([resource]))
        outcome = answer.get("broker_logger", {}).get(str(broker_id))
        if outcome != "OK":
            raise KafkaAdminError(f"setting {logger}={level} on broker {broker_id} failed: {outcome}")

    def set_group_config(self, group: str, settings: dict[str, str]) -> None:
        """A group's own settings (KIP-848 and KIP-932 group configs: `share.auto.offset.reset`,
        `share.record.lock.duration.ms`, ...), set incrementally; the group need not exist yet."""
        self.set_configs(ResourceType.GROUP, group, settings, f"group {group}'s")

    def set_topic_config(self, topic: str, settings: dict[str, str]) -> None:
        """A topic's settings changed live, incrementally (the others kept)."""
        self.set_configs(ResourceType.TOPIC, topic, settings, f"topic {topic}'s")

    def set_broker_default_config(self, settings: dict[str, str]) -> None:
        """Every broker's dynamic setting, as the cluster-wide default (`kafka-configs --entity-default`), live."""
        self.set_configs(ResourceType.BROKER, "", settings, "the brokers' cluster-wide")

    def set_configs(self, kind: ResourceType, name: str, settings: dict[str, str], whose: str) -> None:
        entries = [ConfigEntry(key, value, incremental_operation=AlterConfigOpType.SET) for key, value in settings.items()]
        self._alter_configs(ConfigResource(kind, name, incremental_configs=entries),
                            f"setting {whose} {', '.join(f'{k}={v}' for k, v in settings.items())}")

    def delete_configs(self, kind: ResourceType, name: str, keys: list[str], whose: str) -> None:
        """Settings removed (back to their defaults), the others kept."""
        entries = [ConfigEntry(key, "", incremental_operation=AlterConfigOpType.DELETE) for key in keys]
        self._alter_configs(ConfigResource(kind, name, incremental_configs=entries),
                            f"removing {whose} {', '.join(keys)}")

    def _alter_configs(self, resource: ConfigResource, what: str) -> None:
        futures = self._call(what, lambda: self._admin.incremental_alter_configs([resource],
                                                                                 request_timeout=self.timeout_s))
        for future in futures.values():
            self._call(what, lambda: future.result(timeout=self.timeout_s))

    def reassign(self, name: str, replicas: dict[int, list[int] | None]) -> None:
        """Each partition of the topic given its new replicas, its preferred leader first, or None: its move under
        way cancelled (AlterPartitionReassignments, which librdkafka's admin API lacks: kafka-python's); the controller
        moves them in the background, and the metadata names the old and the new replicas together until a
        partition's move is done."""
        from kafka import TopicPartition as KafkaPythonPartition

        moves = {KafkaPythonPartition(name, partition): brokers for partition, brokers in replicas.items()}
        answer = self._kafka_python("reassign partitions", f"reassigning {name}",
                                    lambda client: client.alter_partition_reassignments(moves))
        if refused := {tp.partition: error.__name__ for tp, error in answer.items() if error is not None}:
            raise KafkaAdminError(f"reassigning {name} was refused: {refused}")

    def feature_level(self, name: str) -> int | None:
        """The cluster's finalized level of feature `name` (`transaction.version`, `metadata.version`; DescribeFeatures,
        which librdkafka's admin API lacks); None when the cluster has not finalized it."""
        features = self._kafka_python("describe features", "describe features", lambda client: client.describe_features())
        finalized = (features.get(name) or {}).get("finalized")
        return int(finalized[1]) if finalized else None

    def _kafka_python(self, purpose: str, what: str, call):
        """`call` with a kafka-python admin client (imported late: only these helpers need kafka-python), bounded by
        this admin's timeout, connecting included."""
        from kafka.admin import KafkaAdminClient
        from kafka.errors import KafkaError as KafkaPythonError

        timeout_ms = int(self.timeout_s * 1000)
        try:
            client = KafkaAdminClient(bootstrap_servers=self.bootstrap_servers.split(","), request_timeout_ms=timeout_ms,
                                      bootstrap_timeout_ms=timeout_ms, **self.connection.kafka_python())
        except KafkaPythonError as exc:
            raise KafkaAdminError(f"cannot connect to {self.bootstrap_servers} to {purpose}: {exc}") from exc
        try:
            return call(client)
        except KafkaPythonError as exc:
            raise KafkaAdminError(f"{what} failed: {exc}") from exc
        finally:
            client.close()

    def close(self) -> None:
        self._admin = None  # AdminClient has no close(); dropping it releases librdkafka's handle

    def __enter__(self) -> KafkaAdmin:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _call(self, what: str, action):
        try:
            return action()
        except KafkaException as exc:
            raise KafkaAdminError(f"{what} failed: {exc.args[0].str()}") from exc
        except TimeoutError as exc:
            raise KafkaAdminError(f"{what} timed out after {self.timeout_s:g} s; is {self.bootstrap_servers} reachable?") from exc


class _OffsetsQuery:
    """One `offsets` call: what its attempts found so far, and why the rest is still missing."""

    def __init__(self, admin: AdminClient, name: str, deadline: float, fresh: Callable[[], AdminClient]) -> None:
        self._admin = admin
        self._fresh = fresh
        self.name = name
        self.deadline = deadline
        self.found: dict[tuple[int, int], int] = {}  # (partition, 0: earliest / 1: end) -> offset
        self.problem = "no answer"

    def attempt(self) -> dict[int, tuple[int, int]] | None:
        """Ask for every offset still missing: partition -> (earliest, end) once all are found, else None."""
        partitions = self._partitions()
        if partitions is None:
            return None
        asked = {end: [p for p in partitions if (p, end) not in self.found] for end in (0, 1)}
        requests = {end: self._admin.list_offsets({TopicPartition(self.name, p): spec for p in asked[end]},
                                                  request_timeout=self._call_s())
                    for end, spec in enumerate((OffsetSpec.earliest(), OffsetSpec.latest())) if asked[end]}
        for end, futures in requests.items():  # both sent before either is awaited
            for tp, future in futures.items():
                offset = self._offset(tp.partition, future)
                if offset is not None:
                    self.found[tp.partition, end] = offset
        if any((p, end) not in self.found for p in partitions for end in (0, 1)):
            return None
        return {p: (self.found[p, 0], self.found[p, 1]) for p in partitions}

    def _partitions(self) -> list[int] | None:
        """The topic's partitions from a metadata answer, asked each attempt because it also updates the leaders in
        librdkafka's cache, which list_offsets asks and nothing else updates: without it a dead leader is asked until
        the request times out, and a partition that moved answers FENCED_LEADER_EPOCH for as long as one asks."""
        try:
            metadata = self._admin.list_topics(topic=self.name, timeout=self._call_s())
        except KafkaException as exc:
            if exc.args[0].code() == KafkaError._TIMED_OUT:
                # librdkafka asks a connection that is up but does not answer (a frozen broker) again and again: the
                # next attempt starts from the bootstrap servers on connections of its own
                self._admin = self._fresh()
            return self._keep(exc.args[0], "metadata")
        topic = metadata.topics.get(self.name)
        if topic is None or topic.error is not None:
            return self._keep(topic.error if topic else KafkaError(KafkaError._UNKNOWN_TOPIC), "metadata")
        return sorted(topic.partitions)

    def _offset(self, partition: int, future: Future) -> int | None:
        """The offset one answer gives; None when asking again may give it."""
        try:
            offset = future.result(timeout=self._call_s() + 5).offset
        except KafkaException as exc:
            return self._keep(exc.args[0], f"partition {partition}")
        except TimeoutError:
            offset = -1
        if offset < 0:  # what librdkafka answers, no error given, when the leader it asked never did
            self.problem = f"partition {partition}: its leader did not answer"
            return None
        return offset

    def _keep(self, error: KafkaError, what: str) -> None:
        """Keep an error a leadership move causes as the reason to ask again; raise any other."""
        if not worth_asking_again(error.code()):
            raise KafkaAdminError(f"list offsets of {self.name} failed: {what}: {error.str()}")
        self.problem = f"{what}: {error.name()}"

    def _call_s(self) -> float:
        return max(0.1, min(OFFSETS_ATTEMPT_S, self.deadline - time.monotonic()))


def worth_asking_again(code: int) -> bool:
    """Whether a ListOffsets error is one a leadership move causes (RETRIABLE_OFFSETS_ERRORS), not one of the request."""
    return code in RETRIABLE_OFFSETS_ERRORS


def _replica_sizes(responses: list[dict], topic: str):
    for response in responses:
        for log_dir in response["log_dirs"]:
            for topic_entry in log_dir.get("topics", []):
                if topic_entry["name"] != topic:
                    continue
                for part in topic_entry["partitions"]:
                    yield ReplicaSize(response["broker"], part["partition_index"], part["partition_size"], log_dir["log_dir"])


def java_string_hash(text: str) -> int:
    """Java's String.hashCode() (over UTF-16 code units, in 32-bit arithmetic), made non-negative as Kafka's
    Utils.abs does (Integer.MIN_VALUE becomes 0)."""
    value = 0
    units = text.encode("utf-16-be")
    for index in range(0, len(units), 2):
        value = (31 * value + int.from_bytes(units[index:index + 2], "big")) & 0xFFFFFFFF
    signed = value - (1 << 32) if value >= 1 << 31 else value
    return 0 if signed == -(1 << 31) else abs(signed)

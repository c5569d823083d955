"""A delivery consumer or copier with kafka-python: its calls in delivery_consumer.ConsumerRun.

Written against kafka-python 3.0.x, whose transactional producer is complete: KafkaProducer(transactional_id=...),
init_transactions, begin_transaction, send_offsets_to_transaction(offsets, group_metadata), commit_transaction and
abort_transaction. Where it differs from confluent-kafka:

- Fencing (KIP-447): send_offsets_to_transaction is given the consumer's `group_metadata()` (group id, generation,
  member id, group instance id), which kafka-python sends in TxnOffsetCommit v3: a copier that has lost its
  partitions in a rebalance is refused by the group coordinator (ILLEGAL_GENERATION / UNKNOWN_MEMBER_ID, an
  abortable error here), as confluent's is. A bare group id would also be accepted and would not fence.
- Timeouts: kafka-python's send_offsets_to_transaction, commit_transaction and abort_transaction take none and
  wait until the transaction manager is done (it retries coordinator errors and timeouts itself): the watchdog bounds
  them, and init_transactions (kafka-python's own bound is max_block_ms). Seen with 3.0.12: when a batch the broker
  refused (MessageSizeTooLarge) has been split and refused again, commit_transaction never returns (its EndTxn
  waits for the split batches); the watchdog ends the process where confluent would abort and go on.
- Abortable or fatal: kafka-python has no txn_requires_abort(). A fenced or unauthorized producer (by the
  exception's type) ends the run at once; any other error is answered with abort_transaction, which kafka-python
  refuses in its fatal state: that refusal ends the run too. A record whose send failed puts kafka-python's
  transaction into its abortable state, so its commit fails rather than committing without it.
- Rewind after an abort: consumer.committed(tp) per assigned partition (an OffsetFetch each), then seek, or
  seek_to_beginning where the group has no offset yet (confluent: OFFSET_BEGINNING).
- Rebalances: ConsumerRebalanceListener (eager assignors: once per rebalance, an empty assignment too, as
  confluent's on_assign). A rejoin is driven to its end before a poll (ensure_active_group): poll() leaves a round
  whose timer ran out to the next poll, and a round that ends between two polls is thrown away or, the leader's
  rejoin for new metadata, lost for good (adapters/kafka_python.py's _join_group). kafka-python heartbeats from
  its IO thread.
- Poll errors: kafka-python raises from poll() where confluent hands out error messages: a retriable one is
  skipped (the next poll tries again), any other ends the run (confluent skips non-fatal ones and goes on).
- A pattern subscription (subscribe-topic) is matched against the metadata kafka-python's IO thread fetches. A member
  that joined before its pattern matched (the rejoin driven before a poll, above) joined with no topics; seen with
  3.0.x: three members on three partitions ended holding [1], [] and [], partitions 0 and 2 read by nobody. So the
  member waits until its pattern has matched a topic, within the task's timeout, before its first join.
- Commit errors: CommitFailedError (the group rebalanced), a timeout or any other error is a counted commit
  failure; FencedInstanceIdError (static membership) ends the run, as librdkafka's fatal consumer error does.
"""

from __future__ import annotations

import itertools
import time

from kafka import ConsumerRebalanceListener, KafkaConsumer, KafkaProducer, OffsetAndMetadata, TopicPartition
from kafka.errors import (ClusterAuthorizationFailedError, FencedInstanceIdError, KafkaError, ProducerFencedError,
                          TransactionalIdAuthorizationFailedError, UnsupportedVersionError)

from kafkabench.workers.adapters.base import printable
from kafkabench.workers.delivery_consumer import POLL_S, ConsumerRun
from kafkabench.workers.throughput_run import RunFailed

PATTERN_S = 0.05  # between two looks at whether the pattern has matched a topic
# the producer can do nothing more after these (kafka-python's transaction manager makes them fatal)
FATAL_PRODUCER_ERRORS = (ProducerFencedError, TransactionalIdAuthorizationFailedError, ClusterAuthorizationFailedError,
                         UnsupportedVersionError)


class KafkaPythonConsumerRun(ConsumerRun):
    client = "kafka-python"

    def _open_clients(self) -> None:
        params, task = self.params, self.task
        bootstrap = task.bootstrap_servers.split(",")
        settings = {**task.consumer_config, "group_id": params.group, "auto_offset_reset": "earliest",
                    "enable_auto_commit": params.mode == "auto-commit",
                    **({"isolation_level": "read_committed"} if self.copying else {})}
        self.config["consumer"] = printable({**settings, "bootstrap_servers": task.bootstrap_servers})
        try:
            self.consumer = KafkaConsumer(bootstrap_servers=bootstrap, **settings)
            self.config["consumer"] = printable(self.consumer.config)
            if self.copying:
                producer = dict(task.producer_config)
                self.config["producer"] = printable({**producer, "bootstrap_servers": task.bootstrap_servers})
                if not producer.get("transactional_id"):
                    raise RunFailed("config", "kafka-python: a copier's producer_config needs a transactional_id")
                self.producer = KafkaProducer(bootstrap_servers=bootstrap, **producer)
                self.config["producer"] = printable(self.producer.config)
                with self.call("init_transactions"):
                    self.producer.init_transactions()
        except (KafkaError, ValueError, TypeError) as exc:
            raise RunFailed("config", str(exc)) from exc

    def _subscribe(self) -> None:
        if self.params.pattern is None:
            self.consumer.subscribe([self.task.topic], listener=_Rebalances(self))
            return
        self.consumer.subscribe(pattern=self.params.pattern, listener=_Rebalances(self))
        deadline = time.monotonic() + self.task.timeout_s
        while not self.consumer.subscription():  # see the module's docstring: a pattern matched before the first join
            if time.monotonic() > deadline:
                raise RunFailed("failure", f"kafka-python's pattern {self.params.pattern} matched no topic within "
                                           f"{self.task.timeout_s:g} s")
            time.sleep(PATTERN_S)

    def _poll(self) -> list:
        try:
            coordinator = self.consumer._coordinator  # kafka-python's own: see adapters/kafka_python.py _join_group
            if coordinator.need_rejoin():  # a whole JoinGroup -> SyncGroup round, never one left between two polls
                coordinator.ensure_active_group(timeout_ms=int(self.task.timeout_s * 1000))
            batches = self.consumer.poll(timeout_ms=int(POLL_S * 1000), max_records=self.params.batch)
        except KafkaError as exc:
            if exc.retriable:
                return []
            raise RunFailed("failure", f"the consumer failed: {exc}") from exc
        return list(itertools.chain.from_iterable(batches.values()))

    def _values(self, records: list) -> list:
        return [record.value for record in records]

    def _timestamps(self, records: list) -> list[int]:
        return [record.timestamp for record in records]

    def _next_offsets(self, records: list) -> dict[int, int]:
        if self.params.pattern is None:  # one topic: a record's partition is its key
            return {record.partition: record.offset + 1 for record in records}
        return {self.key(record.topic, record.partition): record.offset + 1 for record in records}

    def _positions(self, offsets: dict[int, int]) -> dict[TopicPartition, OffsetAndMetadata]:
        return {TopicPartition(*self.topic_partition(key)): OffsetAndMetadata(o, "", -1) for key, o in offsets.items()}

    def _commit_offsets(self, offsets: dict[int, int]) -> bool:
        try:
            self.consumer.commit(self._positions(offsets), timeout_ms=int(self.task.timeout_s * 1000))
        except FencedInstanceIdError as exc:
            raise RunFailed("failure", f"a commit failed: {exc}") from exc
        except KafkaError:
            return False
        return True

    def _transact(self, records: list, copies: list[int]) -> bool:
        producer, output = self.producer, self.params.output_topic
        try:
            with self.call("begin_transaction"):
                producer.begin_transaction()
            with self.call("send"):
                for index in copies:
                    producer.send(output, value=records[index].value, partition=records[index].partition)
            with self.call("send_offsets_to_transaction"):
                producer.send_offsets_to_transaction(self._positions(self._next_offsets(records)),
                                                     self.consumer.group_metadata())
            with self.call("commit_transaction"):
                producer.commit_transaction()
        except FATAL_PRODUCER_ERRORS as exc:
            raise RunFailed("failure", f"the copier's producer can go no further: {exc}") from exc
        except KafkaError as exc:
            self._abort(exc)
            return False
        return True

    def _abort(self, error: KafkaError) -> None:
        """An abortable error: the transaction aborted, the consumer back at its committed offsets."""
        try:
            with self.call("abort_transaction"):
                self.producer.abort_transaction()
        except KafkaError as exc:  # kafka-python refuses to abort in its fatal state
            raise RunFailed("failure", f"after {error}, the abort failed too: {exc}") from exc
        timeout_ms = int(self.task.timeout_s * 1000)
        try:
            with self.call("committed (the rewind after an abort)"):
                for tp in self.consumer.assignment():
                    committed = self.consumer.committed(tp, timeout_ms=timeout_ms)
                    if committed is None:
                        self.consumer.seek_to_beginning(tp)
                    else:
                        self.consumer.seek(tp, committed)
        except KafkaError as exc:
            raise RunFailed("failure", f"after an abort, the committed offsets could not be read: {exc}") from exc

    def _close_clients(self) -> None:
        if self.consumer is not None:
            self.consumer.close(timeout_ms=int(self.task.timeout_s * 1000))
        if self.producer is not None:
            self.producer.close(timeout=self.task.timeout_s)


class _Rebalances(ConsumerRebalanceListener):
    def __init__(self, run: ConsumerRun) -> None:
        self.run = run

    def on_partitions_revoked(self, revoked) -> None:
        self.run.on_revoked([self.run.key(tp.topic, tp.partition) for tp in revoked])

    def on_partitions_assigned(self, assigned) -> None:
        self.run.on_assigned([self.run.key(tp.topic, tp.partition) for tp in assigned])

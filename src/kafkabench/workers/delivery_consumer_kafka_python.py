"""The delivery lab's consumers and copiers (params: core.protocol.DeliveryConsumerParams) with kafka-python: the twin
of delivery_consumer.ConsumerRun (confluent-kafka), with the same modes, counters, progress, outcome and history.

Written against kafka-python 3.0.x, whose transactional producer is complete: KafkaProducer(transactional_id=...),
init_transactions, begin_transaction, send_offsets_to_transaction(offsets, group_metadata), commit_transaction and
abort_transaction. Where it differs from confluent-kafka:

- Fencing (KIP-447): send_offsets_to_transaction is given the consumer's `group_metadata()` (group id, generation,
  member id, group instance id), which kafka-python sends in TxnOffsetCommit v3: a copier that has lost its
  partitions in a rebalance is refused by the group coordinator (ILLEGAL_GENERATION / UNKNOWN_MEMBER_ID, an
  abortable error here), as confluent's is. A bare group id would also be accepted and would not fence.
- Timeouts: kafka-python's send_offsets_to_transaction, commit_transaction and abort_transaction take none and
  wait until the transaction manager is done (it retries coordinator errors and timeouts itself). Each call is
  bounded here by the task's timeout_s on a helper thread; one that has not returned by then ends the run
  (RunFailed "failure"), as a confluent commit still timing out at its deadline does. init_transactions is
  bounded the same way (kafka-python's own bound is max_block_ms). Seen with 3.0.12: when a batch the broker
  refused (MessageSizeTooLarge) has been split and refused again, commit_transaction never returns (its EndTxn
  waits for the split batches); the bound ends the run where confluent would abort and go on.
- Abortable or fatal: kafka-python has no txn_requires_abort(). A fenced or unauthorized producer (by the
  exception's type) ends the run at once; any other error is answered with abort_transaction, which kafka-python
  refuses in its fatal state: that refusal ends the run too. A record whose send failed puts kafka-python's
  transaction into its abortable state, so its commit fails rather than committing without it.
- Rewind after an abort: consumer.committed(tp) per assigned partition (an OffsetFetch each), then seek, or
  seek_to_beginning where the group has no offset yet (confluent: OFFSET_BEGINNING).
- Rebalances: counted in ConsumerRebalanceListener.on_partitions_assigned (eager assignors, once per rebalance, an
  empty assignment too, as confluent's on_assign). The group protocol advances inside poll(), as in the Java
  client; kafka-python heartbeats from its IO thread.
- Poll errors: kafka-python raises from poll() where confluent hands out error messages: a retriable one is
  skipped (the next poll tries again), any other ends the run (confluent skips non-fatal ones and goes on).
- Commit errors: CommitFailedError (the group rebalanced), a timeout or any other error is a counted commit
  failure; FencedInstanceIdError (static membership) ends the run, as librdkafka's fatal consumer error does.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Callable
from pathlib import Path

from kafka import ConsumerRebalanceListener, KafkaConsumer, KafkaProducer, OffsetAndMetadata, TopicPartition
from kafka.errors import (ClusterAuthorizationFailedError, FencedInstanceIdError, KafkaError, ProducerFencedError,
                          TransactionalIdAuthorizationFailedError, UnsupportedVersionError)

from kafkabench.core import delivery_ids as ids
from kafkabench.core.delivery_processed import COMMITS, Processed
from kafkabench.core.protocol import DeliveryConsumerParams, Outcome, Progress, Task
from kafkabench.workers.adapters.base import printable
from kafkabench.workers.delivery_consumer import POLL_S, PROGRESS_S
from kafkabench.workers.throughput_run import RunFailed

# the producer can do nothing more after these (kafka-python's transaction manager makes them fatal)
FATAL_PRODUCER_ERRORS = (ProducerFencedError, TransactionalIdAuthorizationFailedError, ClusterAuthorizationFailedError,
                         UnsupportedVersionError)


class ConsumerRun:
    def __init__(self, task: Task, params: DeliveryConsumerParams, report: Callable[[Progress], None]) -> None:
        self.task, self.params, self.report = task, params, report
        self.consumer: KafkaConsumer | None = None
        self.producer: KafkaProducer | None = None
        self.processed: Processed | None = None
        self.counters = dict.fromkeys(("processed", "commits", "aborted", "strays", "rebalances", "commit_failures"), 0)
        self.config: dict[str, dict] = {}
        self._committed_records = 0  # records whose offsets a confirmed commit covers
        self._next_progress = 0.0
        self._first_ns: int | None = None  # the first poll that returned records
        self._last_commit_ns: int | None = None

    @property
    def copying(self) -> bool:
        return self.params.mode == "copy"

    def open(self) -> None:
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
                self._bounded("init_transactions", self.producer.init_transactions)
        except RunFailed as failed:
            raise RunFailed("config", failed.message) from failed
        except (KafkaError, ValueError, TypeError) as exc:
            raise RunFailed("config", str(exc)) from exc
        if not self.copying:
            self.processed = Processed.create(params.history_dir, params.producer, params.count)
        self.consumer.subscribe([task.topic], listener=_Rebalances(self.counters))

    def run(self, stop) -> None:
        """Until `stop` is set: poll a batch, and process, commit or copy it as the mode says."""
        while not stop.is_set():
            records = self._poll()
            if records:
                if self._first_ns is None:
                    self._first_ns = time.monotonic_ns()
                {"auto-commit": self._process, "commit-after": self._process_then_commit,
                 "commit-before": self._commit_then_process, "copy": self._copy}[self.params.mode](records)
            self._progress()
        self._progress(force=True)

    def _poll(self) -> list:
        try:
            batches = self.consumer.poll(timeout_ms=int(POLL_S * 1000), max_records=self.params.batch)
        except KafkaError as exc:
            if exc.retriable:
                return []
            raise RunFailed("failure", f"the consumer failed: {exc}") from exc
        return list(itertools.chain.from_iterable(batches.values()))

    def _process(self, records: list) -> None:
        pause, processed = self.params.process_ms / 1000, self.processed
        for record in records:
            if pause:
                time.sleep(pause)
            if (sequence := self._sequence(record)) is not None:
                processed.record(sequence)
                self.counters["processed"] += 1

    def _process_then_commit(self, records: list) -> None:
        self._process(records)
        self._commit(records)

    def _commit_then_process(self, records: list) -> None:
        if self._commit(records):
            self._process(records)

    def _commit(self, records: list) -> bool:
        """Commit the batch's offsets; a commit refused (a rebalance moved the partitions) is counted, and its
        records are another member's now: commit-before leaves them unprocessed, commit-after has processed them."""
        offsets = _next_offsets(records)
        try:
            self.consumer.commit(self._positions(offsets), timeout_ms=int(self.task.timeout_s * 1000))
        except FencedInstanceIdError as exc:
            raise RunFailed("failure", f"a commit failed: {exc}") from exc
        except KafkaError:
            self.counters["commit_failures"] += 1
            return False
        with (Path(self.params.history_dir) / COMMITS).open("a") as log:
            log.write(Processed.commit_line(offsets))
        self._committed(records)
        return True

    def _copy(self, records: list) -> None:
        """The batch's ids (strays are counted, not copied) and its offsets in one transaction."""
        producer, output = self.producer, self.params.output_topic
        copies = [record for record in records if self._sequence(record) is not None]
        try:
            producer.begin_transaction()
            for record in copies:
                producer.send(output, value=record.value, partition=record.partition)
            self._bounded("send_offsets_to_transaction", producer.send_offsets_to_transaction,
                          self._positions(_next_offsets(records)), self.consumer.group_metadata())
            self._bounded("commit_transaction", producer.commit_transaction)
        except FATAL_PRODUCER_ERRORS as exc:
            raise RunFailed("failure", f"the copier's producer can go no further: {exc}") from exc
        except KafkaError as exc:
            self._abort(exc)
            return
        self.counters["processed"] += len(copies)
        self._committed(records)

    def _bounded(self, what: str, call: Callable, *args):
        """`call(*args)` on a helper thread, waited for up to the task's timeout: kafka-python's transactional
        calls have no timeout of their own. One still running then ends the run (it is left to finish alone)."""
        answer: dict = {}

        def target() -> None:
            try:
                answer["value"] = call(*args)
            except BaseException as exc:  # handed to the caller
                answer["error"] = exc

        thread = threading.Thread(target=target, name=f"kafka-python {what}", daemon=True)
        thread.start()
        thread.join(self.task.timeout_s)
        if thread.is_alive():
            raise RunFailed("failure", f"kafka-python's {what} did not return within {self.task.timeout_s:g} s")
        if "error" in answer:
            raise answer["error"]
        return answer.get("value")

    def _committed(self, records: list) -> None:
        self.counters["commits"] += 1
        self._committed_records += len(records)
        self._last_commit_ns = time.monotonic_ns()

    def _abort(self, error: KafkaError) -> None:
        """An abortable error: the transaction aborted, the consumer back at its committed offsets."""
        try:
            self._bounded("abort_transaction", self.producer.abort_transaction)
        except KafkaError as exc:  # kafka-python refuses to abort in its fatal state
            raise RunFailed("failure", f"after {error}, the abort failed too: {exc}") from exc
        self.counters["aborted"] += 1
        timeout_ms = int(self.task.timeout_s * 1000)
        try:
            for tp in self.consumer.assignment():
                committed = self.consumer.committed(tp, timeout_ms=timeout_ms)
                if committed is None:
                    self.consumer.seek_to_beginning(tp)
                else:
                    self.consumer.seek(tp, committed)
        except KafkaError as exc:
            raise RunFailed("failure", f"after an abort, the committed offsets could not be read: {exc}") from exc

    def _sequence(self, record) -> int | None:
        """The record's sequence, or None (counted as a stray) when it is not an id of the input producer."""
        value = record.value
        if value is None or len(value) < ids.ID_BYTES or value[:4] != ids.MAGIC:
            self.counters["strays"] += 1
            return None
        producer, sequence = int.from_bytes(value[4:6], "big"), int.from_bytes(value[6:14], "big")
        if producer != self.params.producer or sequence >= self.params.count:
            self.counters["strays"] += 1
            return None
        return sequence

    def _positions(self, offsets: dict[int, int]) -> dict[TopicPartition, OffsetAndMetadata]:
        return {TopicPartition(self.task.topic, p): OffsetAndMetadata(o, "", -1) for p, o in offsets.items()}

    def _progress(self, force: bool = False) -> None:
        now = time.monotonic()
        if force or now >= self._next_progress:
            self._next_progress = now + PROGRESS_S
            self.report(Progress(done=self.counters["processed"], acked=self._committed_records))

    def outcome(self, version: str) -> Outcome:
        """Its counts, and its stopwatch: the first poll that returned records to the last commit."""
        timed = self._first_ns is not None and self._last_commit_ns is not None
        return Outcome(client_version=version, counters=dict(self.counters), effective_config=self.config,
                       **({"start_ns": self._first_ns, "end_ns": self._last_commit_ns,
                           "duration_s": (self._last_commit_ns - self._first_ns) / 1e9} if timed else {}))

    def close(self) -> None:
        """The consumer closed (auto-commit: its last commit), the producer flushed and closed."""
        if self.consumer is not None:
            self.consumer.close(timeout_ms=int(self.task.timeout_s * 1000))
        if self.producer is not None:
            self.producer.close(timeout=self.task.timeout_s)


class _Rebalances(ConsumerRebalanceListener):
    """Counts assignments, as confluent's on_assign does."""

    def __init__(self, counters: dict[str, int]) -> None:
        self.counters = counters

    def on_partitions_revoked(self, revoked) -> None:
        pass

    def on_partitions_assigned(self, assigned) -> None:
        self.counters["rebalances"] += 1


def _next_offsets(records: list) -> dict[int, int]:
    """Per partition, the offset after the batch's last record: where the next read starts."""
    return {record.partition: record.offset + 1 for record in records}

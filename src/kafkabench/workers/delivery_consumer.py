"""The delivery lab's consumers and copiers (params: core.protocol.DeliveryConsumerParams), with confluent-kafka; the
Java worker's DeliveryConsumer.java is its twin.

One member of a consumer group reads the delivery ids of the input topic until `finish`:

- auto-commit: each record processed; the client commits in the background (enable.auto.commit).
- commit-after (at-least-once): a batch processed, then its offsets committed.
- commit-before (at-most-once): a batch's offsets committed, then its records processed.
- copy (exactly-once): a batch's ids written unchanged to the same partition of the output topic, in a transaction
  that carries the batch's offsets (send_offsets_to_transaction with the consumer's group metadata, KIP-447), then
  committed (a commit that timed out is tried again). An abortable error aborts it and rewinds the consumer to its
  committed offsets; a fenced or fatal producer ends the worker (the orchestrator starts another).

A value that is not an id of the input producer is a stray: counted, neither processed nor copied. Processing is
`process_ms` of sleep, then the record counted in a mapped history (core.delivery_processed), and
each confirmed commit is a line in it: a consumer killed with SIGKILL keeps what it did and what it committed.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import confluent_kafka
from confluent_kafka import Consumer, KafkaError, KafkaException, Producer, TopicPartition

from kafkabench.core import delivery_ids as ids
from kafkabench.core.delivery_processed import COMMITS, Processed
from kafkabench.core.protocol import DeliveryConsumerParams, Outcome, Progress, Task
from kafkabench.workers.adapters.base import printable
from kafkabench.workers.throughput_run import RunFailed

PROGRESS_S = 0.2
POLL_S = 0.2


class ConsumerRun:
    def __init__(self, task: Task, params: DeliveryConsumerParams, report: Callable[[Progress], None]) -> None:
        self.task, self.params, self.report = task, params, report
        self.consumer: Consumer | None = None
        self.producer: Producer | None = None
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
        settings = {**task.consumer_config, "bootstrap.servers": task.bootstrap_servers, "group.id": params.group,
                    "auto.offset.reset": "earliest", "enable.auto.commit": params.mode == "auto-commit",
                    "enable.partition.eof": False,
                    **({"isolation.level": "read_committed"} if self.copying else {})}
        self.config["consumer"] = printable(settings)
        try:
            self.consumer = Consumer(settings)
            if self.copying:
                producer = {**task.producer_config, "bootstrap.servers": task.bootstrap_servers}
                self.config["producer"] = printable(producer)
                self.producer = Producer(producer)
                self.producer.init_transactions(task.timeout_s)
        except KafkaException as exc:
            raise RunFailed("config", exc.args[0].str()) from exc
        if not self.copying:
            self.processed = Processed.create(params.history_dir, params.producer, params.count)
        self.consumer.subscribe([task.topic], on_assign=self._assigned)

    def _assigned(self, _consumer, _partitions) -> None:
        self.counters["rebalances"] += 1

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
        messages = self.consumer.consume(self.params.batch, POLL_S)
        for message in messages:
            if (error := message.error()) is not None and error.fatal():
                raise RunFailed("failure", f"the consumer failed: {error.str()}")
        return [message for message in messages if message.error() is None]

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
            self.consumer.commit(offsets=[TopicPartition(self.task.topic, p, o) for p, o in offsets.items()],
                                 asynchronous=False)
        except KafkaException as exc:
            if exc.args[0].fatal():
                raise RunFailed("failure", f"a commit failed: {exc.args[0].str()}") from exc
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
                producer.produce(output, record.value(), partition=record.partition())
            producer.send_offsets_to_transaction(
                [TopicPartition(self.task.topic, p, o) for p, o in _next_offsets(records).items()],
                self.consumer.consumer_group_metadata(), self.task.timeout_s)
            self._commit_transaction()
        except KafkaException as exc:
            error: KafkaError = exc.args[0]
            if error.fatal() or not error.txn_requires_abort():
                raise RunFailed("failure", f"the copier's producer can go no further: {error.str()}") from exc
            self._abort(error)
            return
        self.counters["processed"] += len(copies)
        self._committed(records)

    def _commit_transaction(self) -> None:
        """A commit that timed out may be tried again (librdkafka: retriable), within the task's timeout."""
        deadline = time.monotonic() + self.task.timeout_s
        while True:
            try:
                self.producer.commit_transaction(max(0.1, deadline - time.monotonic()))
                return
            except KafkaException as exc:
                if not exc.args[0].retriable() or time.monotonic() >= deadline:
                    raise

    def _committed(self, records: list) -> None:
        self.counters["commits"] += 1
        self._committed_records += len(records)
        self._last_commit_ns = time.monotonic_ns()

    def _abort(self, error: KafkaError) -> None:
        """An abortable error: the transaction aborted, the consumer back at its committed offsets."""
        try:
            self.producer.abort_transaction(self.task.timeout_s)
        except KafkaException as exc:
            raise RunFailed("failure", f"after {error.str()}, the abort failed too: {exc.args[0].str()}") from exc
        self.counters["aborted"] += 1
        assignment = self.consumer.assignment()
        if assignment:
            for committed in self.consumer.committed(assignment, self.task.timeout_s):
                offset = committed.offset if committed.offset >= 0 else confluent_kafka.OFFSET_BEGINNING
                self.consumer.seek(TopicPartition(committed.topic, committed.partition, offset))

    def _sequence(self, record) -> int | None:
        """The record's sequence, or None (counted as a stray) when it is not an id of the input producer."""
        value = record.value()
        if value is None or len(value) < ids.ID_BYTES or value[:4] != ids.MAGIC:
            self.counters["strays"] += 1
            return None
        producer, sequence = int.from_bytes(value[4:6], "big"), int.from_bytes(value[6:14], "big")
        if producer != self.params.producer or sequence >= self.params.count:
            self.counters["strays"] += 1
            return None
        return sequence

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
        """The consumer closed (auto-commit: its last commit), the producer flushed."""
        if self.consumer is not None:
            self.consumer.close()
        if self.producer is not None:
            try:
                self.producer.flush(self.task.timeout_s)
            except KafkaException:  # a fenced producer refuses even this: what it had to say is said
                pass


def _next_offsets(records: list) -> dict[int, int]:
    """Per partition, the offset after the batch's last record: where the next read starts."""
    return {record.partition(): record.offset() + 1 for record in records}

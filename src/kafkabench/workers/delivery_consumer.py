"""The delivery lab's consumers and copiers (params: core.protocol.DeliveryConsumerParams): what every Python client
shares, once; each client (delivery_consumer_confluent, _kafka_python, _aiokafka) supplies its poll, commit and
transaction calls. The Java worker's DeliveryConsumer.java is the twin.

One member of a consumer group reads the delivery ids of the input topic until `finish`:

- auto-commit: each record processed; the client commits in the background (enable.auto.commit).
- commit-after (at-least-once): a batch processed, then its offsets committed.
- commit-before (at-most-once): a batch's offsets committed, then its records processed.
- copy (exactly-once): a batch's ids written unchanged to the same partition of the output topic, in a transaction
  that carries the batch's offsets, then committed. An abortable error aborts it and rewinds the consumer to its
  committed offsets; a fenced or fatal producer ends the worker (the orchestrator starts another).
- share (at-least-once, a share group's member, KIP-932): each record's delivery count stored as it arrives, the
  batch processed, each record acknowledged (ACCEPT), and the acknowledgements committed. A share group has no
  offsets: a record acquired and not acknowledged goes back to the group when its lock expires or its member leaves,
  and comes again with its delivery count one higher.

A value that is not an id of the input producer is a stray: counted, neither processed nor copied. Processing is
`process_ms` of sleep, then the record counted in a mapped history (core.delivery_processed), and each confirmed
commit is a line in it: a consumer killed with SIGKILL keeps what it did and what it committed.

A member given a `pattern` (a groups cell's subscribe-topic) subscribes to the topics it matches: the input topic
and, once it is created, `new_topic`, whose records (`new_producer`'s ids) go to a second history in the
`SECOND_INPUT` directory of its own. Its partitions are numbered on from `numbered_from` wherever the member names a
partition (its commits, its assignment, its reports): one number per partition of both topics (`key`).

Every call into the client runs under the watchdog (`call`, workers.call_watch), whose thread also reports
progress every PROGRESS_S, with the partitions held and, past a second, the call in progress: where a stalled
process is. A call that has not returned within the bound ends the process with an `error` naming it.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import ClassVar

import numpy as np

from kafkabench.core import delivery_ids as ids
from kafkabench.core.delivery_processed import COMMITS, SECOND_INPUT, Processed
from kafkabench.core.protocol import DeliveryConsumerParams, Outcome, Progress, Task
from kafkabench.workers.call_watch import CallWatch

POLL_S = 0.2


class ConsumerRun:
    """The client-independent part of a member: the mode's steps, the stray rule, processing, the commit log, counters,
    progress and the watchdog. A client's subclass opens its clients and makes the calls marked as its own."""

    client: ClassVar[str]

    def __init__(self, task: Task, params: DeliveryConsumerParams, report: Callable[[object], None]) -> None:
        self.task, self.params, self.report = task, params, report
        self.processed: Processed | None = None
        self.inputs: list[tuple[Processed | None, int, int]] = []  # (its history, producer, count) per input topic
        self.counters = dict.fromkeys(("processed", "commits", "aborted", "strays", "rebalances", "commit_failures"), 0)
        self.config: dict[str, dict] = {}
        self.consumer = self.producer = None  # the client's own
        self.assigned: set[int] = set()
        self._committed_records = 0  # records whose offsets a confirmed commit covers
        self._first_ns: int | None = None  # the first poll that returned records
        self._last_commit_ns: int | None = None
        self._watching = threading.Event()
        self.watch = CallWatch(self.client, task.timeout_s, report, lambda: self.outcome(""), look=self._look)

    @property
    def copying(self) -> bool:
        return self.params.mode == "copy"

    # ---- a client's own calls ----------------------------------------------------------------------------------

    def _open_clients(self) -> None:
        """Create the consumer (and for a copier the transactional producer, transactions initialised); fill
        `config`; a refusal is RunFailed("config")."""
        raise NotImplementedError

    def _subscribe(self) -> None:
        """Subscribe to the input topic, or to the topics `pattern` matches; assignments go to `on_assigned`,
        revocations to `on_revoked`, each partition as its `key`."""
        raise NotImplementedError

    def _poll(self) -> list:
        """Up to `batch` records within POLL_S; a fatal consumer error is RunFailed."""
        raise NotImplementedError

    def _values(self, records: list) -> list:
        raise NotImplementedError

    def _timestamps(self, records: list) -> list[int]:
        """Each record's own timestamp (ms), as the client read it."""
        raise NotImplementedError

    def _next_offsets(self, records: list) -> dict[int, int]:
        """Per partition (its `key`), the offset after the batch's last record: where the next read starts."""
        raise NotImplementedError

    def _commit_offsets(self, offsets: dict[int, int]) -> bool:
        """Commit synchronously: True once confirmed, False when refused (counted); RunFailed when fatal."""
        raise NotImplementedError

    def _transact(self, records: list, copies: list[int]) -> bool:
        """One transaction: the records at the `copies` indexes written to the output, the batch's offsets with the
        group's metadata, committed (True); an abortable error aborted and the consumer rewound (False); a fenced or
        fatal producer is RunFailed."""
        raise NotImplementedError

    def _close_clients(self) -> None:
        """The consumer closed (auto-commit: its last commit), the producer flushed and closed."""
        raise NotImplementedError

    def _delivery_counts(self, records: list) -> list[int]:
        """share: each record's delivery count, as the broker gave it."""
        raise NotImplementedError

    def _acknowledge(self, records: list) -> bool:
        """share: every record of the batch accepted, and the acknowledgements committed: True once all were
        confirmed, False when a partition's were refused (counted); RunFailed when fatal."""
        raise NotImplementedError

    # ---- the run -----------------------------------------------------------------------------------------------

    def open(self) -> None:
        self.watch.start()
        with self.call("opening the clients"):
            self._open_clients()
        params = self.params
        if not self.copying:
            self.processed = Processed.create(params.history_dir, params.producer, params.count,
                                              delivered=params.mode == "share")
        self.inputs = [(self.processed, params.producer, params.count)]
        if params.pattern is not None:
            self.inputs.append((Processed.create(Path(params.history_dir) / SECOND_INPUT, params.new_producer,
                                                 params.new_count), params.new_producer, params.new_count))
        with self.call("subscribe"):
            self._subscribe()

    def run(self, stop: threading.Event) -> None:
        """Until `stop` is set: poll a batch, and process, commit or copy it as the mode says."""
        self._watching.set()
        step = {"auto-commit": self._process, "commit-after": self._process_then_commit,
                "commit-before": self._commit_then_process, "copy": self._copy,
                "share": self._process_then_acknowledge}[self.params.mode]
        while not stop.is_set():
            with self.call("poll"):
                records = self._poll()
            if records:
                if self._first_ns is None:
                    self._first_ns = time.monotonic_ns()
                step(records)
        self._watching.clear()
        self._report()

    def close(self) -> None:
        with self.call("close"):
            self._close_clients()

    def outcome(self, version: str) -> Outcome:
        """Its counts, and its stopwatch: the first poll that returned records to the last commit."""
        timed = self._first_ns is not None and self._last_commit_ns is not None
        return Outcome(client_version=version, counters=dict(self.counters), effective_config=self.config,
                       **({"start_ns": self._first_ns, "end_ns": self._last_commit_ns,
                           "duration_s": (self._last_commit_ns - self._first_ns) / 1e9} if timed else {}))

    # ---- the modes' steps --------------------------------------------------------------------------------------

    def _ids(self, values: list) -> list[tuple[np.ndarray, np.ndarray]]:
        """The batch's sequences, decoded in bulk, and per input (`inputs`) which of them are its producer's; the
        values no input has are strays."""
        producers, sequences, ours = ids.decode(values)
        valid = ours & (sequences >= 0)
        return [(sequences, valid & (producers == producer) & (sequences < count))
                for _, producer, count in self.inputs]

    def _process(self, records: list, values: list | None = None,
                 decoded: list[tuple[np.ndarray, np.ndarray]] | None = None) -> None:
        """Each record processed in turn, `process_ms` each; without a processing time, the batch in one piece (its ids
        decoded in bulk, recorded at one time: a Python step per record would cost more than the client's poll).
        `values` and `decoded` when the caller has them already."""
        values = self._values(records) if values is None else values
        created_ms = self._timestamps(records)
        if not self.params.process_ms:
            done, now, created = 0, time.time_ns(), np.asarray(created_ms, np.int64)
            for (processed, _, _), (sequences, kept) in zip(self.inputs, decoded or self._ids(values)):
                processed.record_many(sequences[kept], now, created[kept])
                done += int(np.count_nonzero(kept))
            self.counters["processed"] += done
            self.counters["strays"] += len(values) - done
            return
        pause, counters = self.params.process_ms / 1000, self.counters
        for value, created in zip(values, created_ms):
            time.sleep(pause)
            if (found := self._sequence(value)) is not None:
                found[0].record(found[1], time.time_ns(), created)
                counters["processed"] += 1

    def _process_then_commit(self, records: list) -> None:
        self._process(records)
        self._commit(records)

    def _commit_then_process(self, records: list) -> None:
        if self._commit(records):
            self._process(records)

    def _process_then_acknowledge(self, records: list) -> None:
        """share: the delivery counts stored first (a member killed while processing leaves them), then the batch
        processed and acknowledged."""
        values = self._values(records)
        (sequences, kept), = decoded = self._ids(values)  # a share member reads one input
        self.processed.record_delivered(sequences[kept], np.asarray(self._delivery_counts(records), np.int64)[kept])
        self._process(records, values, decoded)
        with self.call("acknowledge and commit"):
            confirmed = self._acknowledge(records)
        if not confirmed:
            self.counters["commit_failures"] += 1
            return
        self._committed(records)

    def _commit(self, records: list) -> bool:
        """Commit the batch's offsets; a commit refused (a rebalance moved the partitions) is counted, and its
        records are another member's now: commit-before leaves them unprocessed, commit-after has processed them."""
        offsets = self._next_offsets(records)
        with self.call("commit"):
            confirmed = self._commit_offsets(offsets)
        if not confirmed:
            self.counters["commit_failures"] += 1
            return False
        with (Path(self.params.history_dir) / COMMITS).open("a") as log:
            log.write(Processed.commit_line(offsets))
        self._committed(records)
        return True

    def _copy(self, records: list) -> None:
        """The batch's ids (strays are counted, not copied) and its offsets in one transaction."""
        copies = [index for index, value in enumerate(self._values(records)) if self._sequence(value) is not None]
        if self._transact(records, copies):
            self.counters["processed"] += len(copies)
            self._committed(records)
        else:
            self.counters["aborted"] += 1

    def _committed(self, records: list) -> None:
        self.counters["commits"] += 1
        self._committed_records += len(records)
        self._last_commit_ns = time.monotonic_ns()

    def _sequence(self, value: bytes | None) -> tuple[Processed | None, int] | None:
        """The value's input (its history) and sequence, or None (counted as a stray) when it is not an id of an
        input's producer."""
        if value is not None and len(value) >= ids.ID_BYTES and value[:4] == ids.MAGIC:
            producer, sequence = int.from_bytes(value[4:6], "big"), int.from_bytes(value[6:14], "big")
            for processed, ours, count in self.inputs:
                if producer == ours and sequence < count:
                    return processed, sequence
        self.counters["strays"] += 1
        return None

    def key(self, topic: str, partition: int) -> int:
        """The number the member gives a partition: its own on the input topic, from `numbered_from` on for the
        pattern's new topic (the pattern matches those two alone)."""
        return partition if topic == self.task.topic else self.params.numbered_from + partition

    def topic_partition(self, key: int) -> tuple[str, int]:
        """The topic and partition a `key` names."""
        if self.params.numbered_from is None or key < self.params.numbered_from:
            return self.task.topic, key
        return self.params.new_topic, key - self.params.numbered_from

    # ---- rebalances, as each client's listener reports them ----------------------------------------------------

    def on_assigned(self, partitions: list[int]) -> None:
        """Counted once per assignment (an empty one too, as eager assignors hand them out)."""
        self.counters["rebalances"] += 1
        self.assigned.update(partitions)

    def on_revoked(self, partitions: list[int]) -> None:
        self.assigned.difference_update(partitions)

    # ---- the watchdog, and progress from its thread ------------------------------------------------------------

    def call(self, what: str):
        """A client call under the watchdog's bound (a context manager)."""
        return self.watch.call(what)

    def _look(self) -> None:
        if self._watching.is_set():
            self._report()

    def _report(self) -> None:
        self.report(Progress(done=self.counters["processed"], acked=self._committed_records,
                             assigned=sorted(self.assigned), **self.watch.calling()))


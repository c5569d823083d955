"""The delivery scenario (seed 004): a producer whose end is part of the experiment.

params: core.protocol.DeliveryParams. Message i carries the id (producer, i) in its value (core.delivery_ids).
Every answer the client gives goes into a History mapped to files (core.delivery_history): an acknowledgement
(partition, offset), a failure (its error), or a timeout, which says nothing of the outcome and stays unknown
with its error; a message never answered stays unknown. Sends go through the adapters' tracked path: the
client's answers are kept as it hands them out (one list append each) and read into the history in bulk after
each batch of sends, while waiting, and before the result and any exit, so a process that exits at once has
recorded everything it had been told.

With `rate_per_s`, the bulk follows an open-loop schedule (message i due at the bulk's start + i / rate), so a run
lasts long enough for faults to land in it. While it runs, a `progress` (sent and acknowledged so far) every
PROGRESS_S, so the orchestrator can fire faults after a message count and draw the run's timeline; with it, a
window: the acknowledged messages' publish latencies since the last progress (from the send call to the answer, as
the adapter reads it: librdkafka's own for confluent), in a full histogram.

The seed's stopwatch, in `timings`: each of the first `singles` sends alone (sync: send and wait for the
answer; async: the send call), the bulk of the rest, the ending (sync and async-close: the flush of close;
async-sleep: the sleep; async-exit and async-return: nothing), and ms per event = all of it / messages sent.
A `finish` while it sends ends the sending there (between transactions); the mode's ending follows.
Then the mode decides how the process ends: async-exit and async-sleep send their result and `os._exit`
at once; async-return returns without closing the client, and the orchestrator records whether and when
the process ended by itself.

The client calls that can wait (opening, the transactional calls, each slice of a flush) run under the watchdog
(workers.call_watch): one in progress for over a second is named in a progress report, and one that has not returned
within the task's timeout plus a margin ends the process with an error naming it. Sends and polls are the clients'
own to bound (librdkafka's produce never waits; the others' sends wait at most their `max.block.ms`).

With `transaction_size`, the producer is transactional (its config holds the transactional.id): messages go in
transactions of that many, each committed, or aborted on purpose as `aborted(t, abort_ratio)` says; a committed
transaction's messages are acknowledged, an aborted one's are recorded as aborted, and a commit whose outcome the
client cannot tell leaves its messages unknown.
"""

from __future__ import annotations

import math
import os
import threading
import time
from collections.abc import Callable

import numpy as np

from kafkabench.core.protocol import DeliveryParams, Outcome, Progress, Task, Window
from kafkabench.core import delivery_ids as ids
from kafkabench.core.delivery_history import History
from kafkabench.core.histogram import LatencyHistogram
from kafkabench.workers.adapters.base import AdapterError, KafkaClient, SendRefused, TransactionFailed
from kafkabench.workers.call_watch import CallWatch
from kafkabench.workers.throughput_run import RunFailed

# answers that say nothing of the outcome: the record may have been written (librdkafka, Java, kafka-python)
TIMEOUTS = frozenset({"_MSG_TIMED_OUT", "_TIMED_OUT", "REQUEST_TIMED_OUT", "TimeoutException", "KafkaTimeoutError",
                      "RequestTimedOutError"})
QUEUE_FULL_WAIT_S = 0.005
PROGRESS_S = 0.2
BATCH = 256  # async sends handed over at once, between two looks at the answers and the clock
EXITING = ("async-exit", "async-sleep")


def aborted(transaction: int, ratio: float) -> bool:
    """Whether transaction `transaction` (from 0) is aborted on purpose: `ratio` of them, spread evenly (the Java
    worker computes the same in the same doubles)."""
    return math.floor((transaction + 1) * ratio) > math.floor(transaction * ratio)


class DeliveryRun:
    def __init__(self, client: KafkaClient, task: Task, params: DeliveryParams,
                 report: Callable[[Progress], None] = lambda progress: None,
                 finish: threading.Event | None = None) -> None:
        self.client, self.task, self.params, self.report = client, task, params, report
        self.finish = finish or threading.Event()  # set while sending: stop there (between transactions)
        self.history: History | None = None
        self.timings: dict[str, float] = {}
        self.sent = 0
        self._answers: list = []
        self._next_progress = 0.0
        self._window = Window(index=0, start_ns=time.monotonic_ns(), end_ns=0, records=0, payload_bytes=0)
        self._latencies: list[np.ndarray] = []  # the open window's publish latencies (us), as the answers came
        self.watch = CallWatch(client.name, task.timeout_s, report, lambda: self.outcome(""), look=self._look)
        self._sending = False

    def open(self) -> None:
        self.watch.start()
        try:
            with self.watch.call("opening the producer"):
                self.client.open_producer(self.task.bootstrap_servers, self.task.producer_config, answers=self._answers)
        except AdapterError as exc:
            raise RunFailed("config", str(exc)) from exc
        self.history = History.mapped(self.params.history_dir, self.params.producer, self.params.count)
        if self.params.transaction_size:
            transactions = getattr(self.client, "init_transactions", None)
            if transactions is None:
                raise RunFailed("config", f"{self.client.name}: kafkabench drives transactions with confluent and java")
            try:
                with self.watch.call("init_transactions"):
                    transactions(self.task.timeout_s)
            except AdapterError as exc:
                raise RunFailed("config", f"init_transactions failed: {exc}") from exc

    def run(self) -> None:
        """Sends every message as the mode says and times it; the ending that keeps the process is done here,
        the one that ends it (`exit_now`) by the caller once the result is out."""
        params, started = self.params, time.perf_counter()
        self._sending = True
        synchronous = params.mode == "sync"
        singles = min(params.singles, params.count)
        for sequence in range(singles):
            begun = time.perf_counter()
            self._send(sequence, sequence + 1)
            if synchronous:
                self._wait_answered(sequence)
            self.timings[f"single_{sequence + 1}_ms"] = (time.perf_counter() - begun) * 1000
        begun = time.perf_counter()
        if params.transaction_size:
            self._transactions(begun, synchronous)
        elif synchronous:
            for sequence in range(singles, params.count):
                if self.finish.is_set():
                    break
                due = self._await_turn(begun, sequence - singles)
                self._send(sequence, sequence + 1, due)
                self._wait_answered(sequence)
        else:
            step = 1 if params.rate_per_s > 0 else BATCH
            for first in range(singles, params.count, step):
                if self.finish.is_set():
                    break
                due = self._await_turn(begun, first - singles)
                self._send(first, min(first + step, params.count), due)
                self._take_answers()
        if self.sent < params.count:  # told to finish: the history counts what the client was given
            self.history.end_at(self.sent)
        self.timings["bulk_ms"] = (time.perf_counter() - begun) * 1000
        begun = time.perf_counter()
        if params.mode in ("sync", "async-close"):
            self._flush()  # the close after it (the worker's) only releases the client
        elif params.mode == "async-sleep":
            self._serve_for(params.sleep_ms / 1000)
        self.timings["ending_ms"] = (time.perf_counter() - begun) * 1000
        self.timings["ms_per_event"] = (time.perf_counter() - started) * 1000 / max(self.sent, 1)
        self._progress(force=True)

    def _transactions(self, begun: float, synchronous: bool) -> None:
        """The messages in transactions: begun, sent (on the schedule, as the bulk), then committed or aborted."""
        params, client = self.params, self.client
        for transaction, first in enumerate(range(0, params.count, params.transaction_size)):
            if self.finish.is_set():
                return
            end = min(first + params.transaction_size, params.count)
            try:
                with self.watch.call("begin_transaction"):
                    client.begin_transaction()
            except TransactionFailed as failed:  # the last one ended neither way: the producer can go no further
                raise RunFailed("failure", f"no transaction can begin after message {first - 1}: {failed}") from None
            if synchronous or params.rate_per_s > 0:
                for sequence in range(first, end):
                    due = self._await_turn(begun, sequence)
                    self._send(sequence, sequence + 1, due)
                    if synchronous:
                        self._wait_answered(sequence)
            else:
                self._send(first, end)
            self._end_transaction(first, end, commit=not aborted(transaction, params.abort_ratio))

    def _end_transaction(self, first: int, end: int, commit: bool) -> None:
        """Commit (or abort) and record what became of the transaction's messages; a commit the broker refused
        is aborted, one whose outcome is unknown leaves them unknown, a fatal error ends the run."""
        client, timeout = self.client, self.task.timeout_s
        try:
            if commit:
                with self.watch.call("commit_transaction"):
                    client.commit_transaction(timeout)
            else:
                self._flush()  # every message written and answered first: the abort then marks them all
                with self.watch.call("abort_transaction"):
                    client.abort_transaction(timeout)
        except TransactionFailed as failed:
            self._take_answers()
            if failed.abortable:
                try:
                    with self.watch.call("abort_transaction"):
                        client.abort_transaction(timeout)
                except TransactionFailed as abort_failed:  # neither committed nor aborted: nobody can say
                    failed = abort_failed
                else:
                    self._take_answers()
                    self.history.record_aborted(np.arange(first, end))
                    return
            self.history.record_unknowns(np.arange(first, end), failed.name)
            if failed.fatal:
                raise RunFailed("failure", f"the transaction of messages {first}..{end - 1}: {failed}") from None
            return
        self._take_answers()
        if not commit:
            self.history.record_aborted(np.arange(first, end))

    def exit_now(self) -> None:
        """async-exit / async-sleep: end the process with no close and no flush, as the seed's System.exit."""
        self._take_answers()
        os._exit(0)

    def outcome(self, version: str) -> Outcome:
        history = self.history
        if history is None:
            return Outcome(client_version=version, timings=dict(self.timings))
        self._take_answers()
        counters = {"sent": history.sent, "acked": history.acked, "failed": history.failed, "unknown": history.unknown,
                    **({"aborted": history.aborted} if self.params.transaction_size else {})}
        return Outcome(client_version=version, counters=counters, timings=dict(self.timings))

    def _send(self, first: int, end: int, due: float | None = None) -> None:
        """Hand messages first..end-1 over; a full queue is served and tried again, a refusal is the message's
        answer (the client told the producer at once). With `stamp`, each carries its intended send time: `due` on
        the schedule (perf_counter seconds), else now."""
        producer, size = self.params.producer, self.params.size
        values = [ids.encode(producer, sequence, size) for sequence in range(first, end)]
        stamp_ns = None
        if self.params.stamp:
            stamp_ns = time.monotonic_ns() - (0 if due is None else int((time.perf_counter() - due) * 1e9))
        while values:
            try:
                taken = self.client.send_tracked(self.task.topic, values, stamp_ns)
            except SendRefused as refused:
                self.history.record_failure(first + refused.taken, "SendRefused")
                taken = refused.taken + 1
            first += taken
            self.sent = first
            values = values[taken:]
            if values:
                self.client.poll(QUEUE_FULL_WAIT_S)
                self._take_answers()

    def _take_answers(self) -> None:
        """The answers arrived since the last look, into the history in bulk; then a progress if one is due."""
        answers = self._answers
        count = len(answers)  # callbacks may append meanwhile (another thread): only this prefix is taken
        if count:
            taken = answers[:count]
            del answers[:count]
            self._record(self.client.read_answers(taken))
        self._progress()

    def _record(self, answers) -> None:
        _, sequence, _ = ids.decode(answers.values)  # the values are the ones this run sent
        partitions, errors = np.asarray(answers.partitions), answers.errors
        offsets = np.maximum(np.asarray(answers.offsets, np.int64), -1)  # any "no offset" a library gives is -1
        history = self.history
        if errors.count(None) == len(errors):
            history.record_acks(sequence, partitions, offsets)
            self._count_publish(answers.latencies_us, len(errors))
            return
        acked = np.fromiter((error is None for error in errors), bool, len(errors))
        history.record_acks(sequence[acked], partitions[acked], offsets[acked])
        self._count_publish(None if answers.latencies_us is None else answers.latencies_us[acked], int(acked.sum()))
        for at in np.flatnonzero(~acked).tolist():
            (history.record_unknown if errors[at] in TIMEOUTS else history.record_failure)(int(sequence[at]), errors[at])

    def _count_publish(self, latencies_us: np.ndarray | None, acknowledged: int) -> None:
        """The acknowledged messages into the open window: their count, and their latencies, kept raw until the
        window closes (one histogram fold per window, not per batch of answers)."""
        self._window.records += acknowledged
        if latencies_us is not None and len(latencies_us):
            self._latencies.append(latencies_us)

    def _progress(self, force: bool = False) -> None:
        """A progress when one is due; none before the run, where `ready` is due (an error's partial outcome may
        take the answers then)."""
        now = time.monotonic()
        if self._sending and (force or now >= self._next_progress):
            self._next_progress = now + PROGRESS_S
            window, now_ns = self._window, time.monotonic_ns()
            window.end_ns, window.payload_bytes = now_ns, window.records * self.params.size
            window.histograms = {"publish": publish.encode()} if (publish := self._fold()).count else {}
            self.report(Progress(done=self.sent, acked=self.history.acked, window=window))
            self._window = Window(index=window.index + 1, start_ns=now_ns, end_ns=0, records=0, payload_bytes=0)

    def _fold(self) -> LatencyHistogram:
        """The open window's latencies in a histogram; a NaN (the client gave none) is left out, never taken as 0."""
        publish = LatencyHistogram()
        if self._latencies:
            latencies = np.concatenate(self._latencies)
            self._latencies = []
            publish.record_many_us(np.rint(latencies[~np.isnan(latencies)]).astype(np.int64))
        return publish

    def _await_turn(self, begun: float, index: int) -> float | None:
        """The open-loop schedule: the bulk's message i is due at its start + i / rate, whatever happened before;
        the client's answers are served while waiting. When it was due (None: no schedule)."""
        if self.params.rate_per_s <= 0:
            return None
        due = begun + index / self.params.rate_per_s
        while (left := due - time.perf_counter()) > 0:
            self.client.poll(min(left, 0.005))
            self._take_answers()
        return due

    def _wait_answered(self, sequence: int) -> None:
        """sync: serve callbacks until this message has its answer, or the task's timeout passed."""
        deadline = time.monotonic() + self.task.timeout_s
        history = self.history
        while history.status[sequence] == 0 and history.error[sequence] == 0 and time.monotonic() < deadline:
            self.client.poll(0.001)
            self._take_answers()

    def _flush(self) -> None:
        """flush in slices, so progress keeps coming while the last answers arrive; bounded by the task's timeout."""
        deadline = time.monotonic() + self.task.timeout_s
        while self._flush_slice(min(PROGRESS_S, max(deadline - time.monotonic(), 0))) and time.monotonic() < deadline:
            self._take_answers()
        self._take_answers()

    def _flush_slice(self, timeout_s: float) -> int:
        with self.watch.call("flush"):
            return self.client.flush(timeout_s)

    def _look(self) -> None:
        """From the watchdog's thread: while a call holds the sending thread past a second, a progress that names it
        (the sending thread's own reports wait for the call); none before the run, where `ready` is due."""
        if self._sending and (calling := self.watch.calling()):
            self.report(Progress(done=self.sent, acked=self.history.acked if self.history else 0, **calling))

    def _serve_for(self, seconds: float) -> None:
        """Sleep, serving the client's callbacks meanwhile: an answer arriving while asleep is still heard."""
        deadline = time.monotonic() + seconds
        while (left := deadline - time.monotonic()) > 0:
            self.client.poll(min(left, 0.05))
            self._take_answers()

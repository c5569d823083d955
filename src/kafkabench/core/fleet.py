"""The workers of one streaming run (producers and consumers, of any lab): launched, followed while they stream
windows, finished.

Following is one loop on an injected clock, so that a per-tick hook (a sampler) runs at known times and tests can drive the loop without processes or waiting. Consumers asked to finish
are followed by that same loop: their last windows still reach the timeline and the hook keeps ticking.
"""

from __future__ import annotations

import time
from typing import Callable

from pydantic import BaseModel

from kafkabench.core.clock import Clock, monotonic_ns
from kafkabench.core.events import Listener
from kafkabench.core.launcher import Worker, WorkerLauncher
from kafkabench.core.histogram import LatencyHistogram
from kafkabench.core.protocol import Finish, Outcome, Progress, Result, Task, Window
from kafkabench.core.timeline import Timeline, TimelineEntry
from kafkabench.core.worker_process import WorkerFailed, stop_all as stop_workers


class Reported:
    """What a worker's windows said so far: its partial outcome if it dies without sending one."""

    def __init__(self) -> None:
        self.windows = 0
        self.records = self.payload_bytes = self.errors = 0
        self.start_ns: int | None = None
        self.end_ns: int | None = None
        self.histograms: dict[str, LatencyHistogram] = {}

    def add(self, window: Window) -> None:
        self.windows += 1
        self.records += window.records
        self.payload_bytes += window.payload_bytes
        self.errors += window.errors
        self.start_ns = window.start_ns if self.start_ns is None else min(self.start_ns, window.start_ns)
        self.end_ns = window.end_ns if self.end_ns is None else max(self.end_ns, window.end_ns)
        for metric, blob in window.histograms.items():
            self.histograms.setdefault(metric, LatencyHistogram()).merge(LatencyHistogram.decode(blob))

    def outcome(self, role: str) -> Outcome:
        counted = "acked" if role == "produce" else "received"
        return Outcome(histograms={metric: h.encode() for metric, h in self.histograms.items()},
                       counters={counted: self.records, "payload_bytes": self.payload_bytes, "errors": self.errors},
                       start_ns=self.start_ns, end_ns=self.end_ns)

    def __str__(self) -> str:
        return f"{self.windows} window{'s' * (self.windows != 1)}, {self.records:,} records"


class FleetWorker:
    def __init__(self, role: str, worker: Worker) -> None:
        self.role = role
        self.name = worker.name
        self.process = worker
        self.outcome: Outcome | None = None
        self.error: str | None = None
        self.done = 0
        self.reported = Reported()

    @property
    def running(self) -> bool:
        return self.outcome is None and self.error is None

    def entry(self) -> dict:
        """This worker in a result: where it ran, its own counters and span (start and end on the orchestrator's
        monotonic clock), what went wrong."""
        outcome = self.outcome or Outcome()
        return {"name": self.name, "role": self.role, **self.process.placement, "counters": outcome.counters,
                "start_ns": outcome.start_ns, "end_ns": outcome.end_ns, "error": self.error}


def launch(role: str, index: int, launcher: WorkerLauncher, client: str, task: Task) -> FleetWorker:
    worker = launcher.start(f"{'producer' if role == 'produce' else 'consumer'} {index + 1}", client)
    try:
        worker.send(task)
    except BaseException:
        worker.stop()  # the caller never got hold of it, so nobody else would
        raise
    return FleetWorker(role, worker)


def follow(workers: list[FleetWorker], timelines: dict[str, Timeline], events: Listener, drain_s: float,
           finish_timeout_s: float, consume_total: int | None = None, on_tick: Callable[[float], None] | None = None,
           clock: Clock = monotonic_ns, sleep: Callable[[float], None] = time.sleep, tick_s: float = 0.02,
           readers: int = 1) -> None:
    """Relay windows until every producer has its result, then let consumers drain and finish them.
    `consume_total`: finish the consumers once together they received that many (a group's partitions
    are rarely even, so no single consumer can be given a share). A worker failing before it was asked to
    finish raises WorkerFailed; one failing or silent after it was asked keeps the error and its partial.
    `on_tick` may add workers to `workers` (consumers started late) and ask some to finish (ask_finish).
    `readers`: the consumer groups that each read every acknowledged record."""
    finishing = _Finishing(finish_timeout_s, clock)
    start_ns, drain_by_ns = clock(), None
    while any(w.running for w in workers):
        producers = [w for w in workers if w.role == "produce"]
        consumers = [w for w in workers if w.role == "consume"]
        for worker in workers:
            if worker.running:
                _pump(worker, timelines[worker.role], events, finishing)
        received = sum(w.done for w in consumers)
        if consume_total is not None and received >= consume_total:
            finishing.ask(consumers)
        if producers and not any(w.running for w in producers):
            drain_by_ns = clock() + int(drain_s * 1e9) if drain_by_ns is None else drain_by_ns
            if received >= readers * _acked(producers) or clock() > drain_by_ns:
                finishing.ask(consumers)
        for worker in finishing.overdue(workers):
            _emit(worker.role, timelines[worker.role].finished(worker.name), events)
        if on_tick is not None:
            on_tick((clock() - start_ns) / 1e9)
        sleep(tick_s)


def _acked(producers: list[FleetWorker]) -> int:
    return sum(w.outcome.counters.get("acked", 0) for w in producers if w.outcome is not None)


class _Finishing:
    """Workers sent `finish`, each with a deadline for its result on the follow loop's clock."""

    def __init__(self, timeout_s: float, clock: Clock) -> None:
        self._timeout_s = timeout_s
        self._clock = clock
        self._deadlines: dict[str, int] = {}

    def ask(self, workers: list[FleetWorker]) -> None:
        for worker in workers:
            if worker.running and worker.name not in self._deadlines:
                self._deadlines[worker.name] = self._clock() + int(self._timeout_s * 1e9)
                _send_finish(worker)

    def asked(self, worker: FleetWorker) -> bool:
        return worker.name in self._deadlines

    def overdue(self, workers: list[FleetWorker]) -> list[FleetWorker]:
        """The workers just given up on, now marked with the error."""
        now, late = self._clock(), []
        for worker in workers:
            if worker.running and self.asked(worker) and now > self._deadlines[worker.name]:
                worker.error = f"no result within {self._timeout_s:g} s of being asked to finish"
                late.append(worker)
        return late


def _pump(worker: FleetWorker, timeline: Timeline, events: Listener, finishing: _Finishing) -> None:
    try:
        while worker.running and (message := worker.process.next_message(0)) is not None:
            _relay(worker, message, timeline, events)
    except WorkerFailed as failed:
        if not finishing.asked(worker):
            raise
        worker.outcome, worker.error = failed.partial, failed.reason
        _emit(worker.role, timeline.finished(worker.name), events)


def _relay(worker: FleetWorker, message: BaseModel, timeline: Timeline, events: Listener) -> None:
    if isinstance(message, Progress):
        worker.done = message.done
        if message.window is not None:
            worker.reported.add(message.window)
            _emit(worker.role, timeline.add(worker.name, message.window), events)
    elif isinstance(message, Result):
        worker.outcome = message
        _emit(worker.role, timeline.finished(worker.name), events)


def _emit(role: str, entries: list[TimelineEntry], events: Listener) -> None:
    for entry in entries:
        events.window(role, entry)


def ask_finish(workers: list[FleetWorker]) -> None:
    """Ask running workers to finish without waiting (from a follow hook: the loop collects their results)."""
    for worker in workers:
        if worker.running:
            _send_finish(worker)


def stop_all(workers: list[FleetWorker]) -> None:
    """Every worker's process stopped, side by side (core.worker_process.stop_all)."""
    stop_workers([worker.process for worker in workers])


def finish_all(workers: list[FleetWorker], timeout_s: float) -> None:
    """Ask every running worker to finish and wait for each result in turn (after a failure, where nothing is
    relayed any more); a worker failing or silent keeps the error and its partial outcome."""
    for worker in workers:
        if worker.running:
            _send_finish(worker)
    for worker in workers:
        if not worker.running:
            continue
        try:
            worker.outcome = _await_result(worker, timeout_s)
        except WorkerFailed as failed:
            worker.outcome, worker.error = failed.partial, failed.reason


def finish_after_failure(workers: list[FleetWorker], failed: WorkerFailed, timeout_s: float) -> str:
    """The failed worker keeps its error and partial outcome (what its windows said, when it sent none), the others
    are finished; the line ending the run."""
    broken = next((w for w in workers if w.name == failed.worker), None)
    finish_all([w for w in workers if w is not broken], timeout_s)
    if broken is None:
        return str(failed)
    broken.error = failed.reason
    if failed.partial is not None:
        broken.outcome = failed.partial
        return str(failed)
    broken.outcome = broken.reported.outcome(broken.role)
    return f"{failed} ({broken.reported} reported before)"


def _send_finish(worker: FleetWorker) -> None:
    try:
        worker.process.send(Finish())
    except WorkerFailed:
        pass  # gone already: reading from it says why


def _await_result(worker: FleetWorker, timeout_s: float) -> Outcome:
    """Skip the worker's remaining progress messages until its result. Real time, not an injected clock: the
    wait is spent blocked in next_message."""
    deadline_ns = monotonic_ns() + int(timeout_s * 1e9)
    while (left_ns := deadline_ns - monotonic_ns()) > 0:
        message = worker.process.next_message(left_ns / 1e9)
        if isinstance(message, Result):
            return message
    raise WorkerFailed(worker.name, f"no result within {timeout_s:g} s of being asked to finish", kind="timeout")

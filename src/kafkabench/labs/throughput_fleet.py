"""The worker processes of one throughput run: launched, followed while they stream windows, finished."""

from __future__ import annotations

import time

from kafkabench.core.protocol import Finish, Outcome, Progress, Result, Task
from kafkabench.core.worker_process import WorkerFailed, WorkerProcess
from kafkabench.labs import throughput_merge as merge


class FleetWorker:
    def __init__(self, role: str, process: WorkerProcess) -> None:
        self.role = role
        self.name = process.name
        self.process = process
        self.outcome: Outcome | None = None
        self.error: str | None = None
        self.done = 0


def launch(role: str, index: int, command: list[str], task: Task) -> FleetWorker:
    name = f"{'producer' if role == 'produce' else 'consumer'} {index + 1}"
    process = WorkerProcess(name, command)
    process.send(task)
    return FleetWorker(role, process)


def follow(workers: list[FleetWorker], timelines: dict[str, merge.Timeline], listener, drain_s: float,
           finish_timeout_s: float, consume_total: int | None = None) -> None:
    """Relay windows until every producer has its result, then let consumers drain and finish them.
    `consume_total`: finish the consumers once together they received that many (a group's partitions
    are rarely even, so no single consumer can be given a share)."""
    producers = [w for w in workers if w.role == "produce"]
    consumers = [w for w in workers if w.role == "consume"]
    drain_deadline = None
    while any(w.outcome is None for w in workers):
        for worker in workers:
            if worker.outcome is None:
                _pump(worker, timelines[worker.role], listener)
        if consume_total is not None and sum(w.done for w in consumers) >= consume_total:
            finish_all(consumers, finish_timeout_s)
        if producers and all(w.outcome is not None for w in producers):
            acked = sum(w.outcome.counters.get("acked", 0) for w in producers)
            drain_deadline = drain_deadline or time.monotonic() + drain_s
            if sum(w.done for w in consumers) >= acked or time.monotonic() > drain_deadline:
                finish_all(consumers, finish_timeout_s)
        time.sleep(0.02)


def _pump(worker: FleetWorker, timeline: merge.Timeline, listener) -> None:
    while (message := worker.process.next_message(0)) is not None:
        if isinstance(message, Progress):
            worker.done = message.done
            for entry in timeline.add(worker.name, message.window) if message.window else []:
                listener.window(worker.role, entry)
        elif isinstance(message, Result):
            worker.outcome = message
            for entry in timeline.finished(worker.name):
                listener.window(worker.role, entry)
            listener.done(worker.role, worker.done)
            return


def finish_all(workers: list[FleetWorker], timeout_s: float) -> None:
    for worker in workers:
        if worker.outcome is None and worker.error is None:
            try:
                worker.process.send(Finish())
            except WorkerFailed:
                pass
    for worker in workers:
        if worker.outcome is not None or worker.error is not None:
            continue
        try:
            worker.outcome = _await_result(worker, timeout_s)
        except WorkerFailed as failed:
            worker.outcome, worker.error = failed.partial, failed.reason


def _await_result(worker: FleetWorker, timeout_s: float) -> Outcome:
    """Skip the worker's remaining progress messages until its result."""
    deadline = time.monotonic() + timeout_s
    while (left := deadline - time.monotonic()) > 0:
        message = worker.process.next_message(left)
        if isinstance(message, Result):
            return message
    raise WorkerFailed(worker.name, f"no result within {timeout_s:g} s of being asked to finish", kind="timeout")

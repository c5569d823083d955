"""One delivery producer as the orchestrator sees it: the worker started and given its task, the faults fired while
it sends, its progress kept as the run's timeline, and how its process ended after the result: at once, by
itself (and when), or still running after its bound and killed."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from kafkabench.cluster.target import Target
from kafkabench.core.protocol import Progress, Ready, Result, Start, Task
from kafkabench.core.results import Run
from kafkabench.core.worker_process import WorkerFailed
from kafkabench.config.redact import redact
from kafkabench.labs.delivery.cells import DeliveryCell
from kafkabench.labs.delivery.faults import FaultRun
from kafkabench.labs.delivery.scenario import DeliveryScenario

WORKER_START_S = 120
SILENCE_MARGIN_S = 30  # beyond the scenario's timeout: a worker silent this long is hung
EXIT_WAIT_S = 30  # modes that end the process: how long it may take to be gone


@dataclass
class ProducerRun:
    """What the orchestrator saw of one producer worker."""

    result: Result | None = None
    error: str | None = None
    sent: int = 0
    acked: int = 0
    timeline: list[dict] = field(default_factory=list)
    exit_code: int | None = None
    exit_s: float | None = None  # result -> the process gone
    killed: bool = False
    refused: bool = False  # the worker's client refused its settings


def drive_producer(task: Task, cell: DeliveryCell, scenario: DeliveryScenario, target: Target,
                   faults: FaultRun) -> ProducerRun:
    """Start the worker, fire the faults while it sends, and watch how its process ends."""
    seen = ProducerRun()
    faults.acknowledged = lambda: seen.acked
    worker = target.launcher.start(f"delivery {cell.client} {cell.mode}", cell.client)
    try:
        worker.send(task)
        seen.result = _follow(worker, seen, scenario, faults)
        _watch_exit(worker, seen, scenario.return_wait if cell.worker_mode == "async-return" else EXIT_WAIT_S)
    except WorkerFailed as failed:
        seen.error, seen.refused = failed.reason, failed.kind == "config"
        if failed.partial is not None:
            seen.result = Result(**failed.partial.model_dump())
    finally:
        worker.stop(0 if seen.exit_code is None else 10)
    return seen


def _follow(worker, seen: ProducerRun, scenario: DeliveryScenario, faults: FaultRun) -> Result:
    worker.receive(Ready, timeout_s=WORKER_START_S)
    start = time.monotonic()
    faults.start()
    worker.send(Start())
    last_message, last_acked, last_t = start, 0, 0.0
    while True:
        message = worker.next_message(0.1)
        now = time.monotonic()
        if message is None:
            if now - last_message > scenario.timeout + SILENCE_MARGIN_S:
                raise WorkerFailed(worker.name, f"said nothing for {scenario.timeout + SILENCE_MARGIN_S:g} s", "timeout")
            continue
        last_message = now
        if isinstance(message, Result):
            return message
        if isinstance(message, Progress) and message.acked is not None:
            t = now - start
            seen.sent, seen.acked = message.done, message.acked
            seen.timeline.append({"t_s": round(t, 3), "sent": message.done, "records": message.acked - last_acked,
                                  "records_per_s": (message.acked - last_acked) / (t - last_t) if t > last_t else 0.0})
            last_acked, last_t = message.acked, t


def _watch_exit(worker, seen: ProducerRun, wait_s: float) -> None:
    """How the process ended after its result: by itself within `wait_s` (and when), or killed."""
    begun = time.monotonic()
    seen.exit_code = worker.wait_exit(wait_s)
    seen.exit_s = round(time.monotonic() - begun, 3)
    seen.killed = seen.exit_code is None


def fill_producer(run: Run, seen: ProducerRun, cell: DeliveryCell) -> None:
    result = seen.result
    if result is not None:
        run.client_version = result.client_version
        run.timings = dict(result.timings)
        if result.effective_config.get("producer"):
            run.config["producer"] = redact(result.effective_config["producer"])
        run.duration_s = run.timings.get("ms_per_event", 0.0) * run.params["count"] / 1000
    run.timeline = seen.timeline
    if seen.exit_s is not None:
        run.timings["exit_s"] = seen.exit_s
        run.params["process_end"] = process_end(cell.worker_mode, seen)
    run.error = seen.error


def process_end(mode: str, seen: ProducerRun) -> str:
    if seen.killed:
        return f"still running {seen.exit_s:g} s after its result: killed"
    how = "exited at once" if mode in ("async-exit", "async-sleep") else "ended by itself" if mode == "async-return" \
        else "closed and exited"
    return f"{how} ({seen.exit_code}) {seen.exit_s:g} s after its result"

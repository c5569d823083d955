"""One delivery producer as the orchestrator sees it: the worker started and given its task, the faults fired while
it sends, its progress kept (for the run's liveness and timeline, labs.delivery.liveness), and how its process ended after the result: at once, by
itself (and when), or still running after its bound and killed."""

from __future__ import annotations

import contextlib
import threading
import time
from dataclasses import dataclass, field

from kafkabench.cluster.target import Target
from kafkabench.core.liveness import Track
from kafkabench.core.protocol import Finish, Progress, Ready, Result, Start, Task
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
    points: list[tuple[float, int, int]] = field(default_factory=list)  # (monotonic, sent, acked) as reported
    windows: list[tuple[float, str]] = field(default_factory=list)  # (monotonic, its window's publish histogram)
    track: Track = field(default_factory=Track)  # progress: acknowledged; work waiting: sent and not yet answered
    started_at: float | None = None  # monotonic: told to start
    ended_at: float | None = None  # its result, or its failure
    exit_code: int | None = None
    exit_s: float | None = None  # result -> the process gone
    killed: bool = False
    refused: bool = False  # the worker's client refused its settings
    told_to_finish_s: float | None = None  # --end-after-heal: when it was told to stop sending, since the start
    worker: dict = field(default_factory=dict)  # its entry in the result's `workers`: name and where it ran


def drive_producers(tasks: list[Task], cell: DeliveryCell, scenario: DeliveryScenario, target: Target,
                    faults: FaultRun) -> list[ProducerRun]:
    """Start a worker per task (placed together: on Ray, one per node), every one ready before any is told to go
    and before the faults' clock starts; fire the faults while they send (`--fault-after` counts the acks of all);
    follow each on a thread of its own, and watch how each process ends. A producer that fails leaves the others
    to finish: every history is judged."""
    seen = [ProducerRun() for _ in tasks]
    faults.acknowledged = lambda: sum(one.acked for one in seen)
    workers: list = []
    starting = 0  # the producer being started
    try:
        target.launcher.reserve(len(tasks))
        for starting, task in enumerate(tasks):
            workers.append(target.launcher.start(f"delivery {cell.client} {cell.mode}"
                                                 + (f" producer {starting + 1}" if len(tasks) > 1 else ""), cell.client))
            workers[-1].send(task)
        for worker, one in zip(workers, seen):  # they start side by side; where each runs is known once it is ready
            _failing_into(one, worker.receive, Ready, timeout_s=WORKER_START_S)
            one.worker = {"name": worker.name, "role": "produce", **worker.placement}
        if any(one.error for one in seen):
            return seen
        start = time.monotonic()
        faults.start()
        for worker, one in zip(workers, seen):
            one.started_at = start
            one.track.note(start, count=0, waiting=False)
            _failing_into(one, worker.send, Start())
        exit_wait = scenario.return_wait if cell.worker_mode == "async-return" else EXIT_WAIT_S
        followers = [threading.Thread(target=_failing_into, args=(one, _follow, worker, one, scenario, start, exit_wait),
                                      name=f"follow {worker.name}", daemon=True)
                     for worker, one in zip(workers, seen) if not one.error]
        for follower in followers:
            follower.start()
        if scenario.end_after_heal is not None and faults.planned:
            _finish_after_faults(workers, seen, faults, scenario.end_after_heal, start, followers)
        for follower in followers:  # each ends by itself: a silent worker is given up after its own bound
            follower.join()
    except WorkerFailed as failed:  # could not start, or could not be given its task
        _failed(seen[starting], failed)
    finally:
        for worker, one in zip(workers, seen):
            worker.stop(0 if one.exit_code is None else 10)
            one.ended_at = one.ended_at or time.monotonic()
    return seen


def _finish_after_faults(workers: list, seen: list[ProducerRun], faults: FaultRun, after_s: float, start: float,
                         followers: list[threading.Thread]) -> None:
    """--end-after-heal: once the faults' schedule is over, `after_s` seconds more, then every producer still sending
    is told to finish (it stops between two sends, or two transactions, and ends as its mode says). Returns as soon
    as every producer ended by itself."""
    def sending() -> bool:
        return any(follower.is_alive() for follower in followers)

    while sending() and not faults.done.wait(0.1):
        pass
    until = time.monotonic() + after_s
    while sending() and time.monotonic() < until:
        time.sleep(0.1)
    for worker, one in zip(workers, seen):
        if one.result is None and not one.error:
            one.told_to_finish_s = round(time.monotonic() - start, 3)
            with contextlib.suppress(WorkerFailed):  # it ended meanwhile: its follower says how
                worker.send(Finish())


def _failing_into(seen: ProducerRun, call, *args, **kwargs) -> None:
    try:
        call(*args, **kwargs)
    except WorkerFailed as failed:
        _failed(seen, failed)


def _failed(seen: ProducerRun, failed: WorkerFailed) -> None:
    seen.error, seen.refused = failed.reason, failed.kind == "config"
    if failed.partial is not None:
        seen.result = Result(**failed.partial.model_dump())


def _follow(worker, seen: ProducerRun, scenario: DeliveryScenario, start: float, exit_wait_s: float) -> None:
    """The worker's progress into `seen` until its result, then how its process ended."""
    last_message = start
    while True:
        message = worker.next_message(0.1)
        now = time.monotonic()
        if message is None:
            if now - last_message > scenario.timeout + SILENCE_MARGIN_S:
                raise WorkerFailed(worker.name, f"said nothing for {scenario.timeout + SILENCE_MARGIN_S:g} s", "timeout")
            continue
        last_message = now
        if isinstance(message, Result):
            seen.result, seen.ended_at = message, now
            break
        if isinstance(message, Progress) and message.acked is not None:
            seen.sent, seen.acked = message.done, message.acked
            seen.points.append((now, message.done, message.acked))
            if message.window is not None and (publish := message.window.histograms.get("publish")):
                seen.windows.append((now, publish))
            seen.track.note(now, count=message.acked, waiting=message.done > message.acked)
    _watch_exit(worker, seen, exit_wait_s)


def _watch_exit(worker, seen: ProducerRun, wait_s: float) -> None:
    """How the process ended after its result: by itself within `wait_s` (and when), or killed."""
    begun = time.monotonic()
    seen.exit_code = worker.wait_exit(wait_s)
    seen.exit_s = round(time.monotonic() - begun, 3)
    seen.killed = seen.exit_code is None


def fill_producer(run: Run, seen: list[ProducerRun], cell: DeliveryCell) -> None:
    """The cell's run from what was seen of its producers: one as before; several as one run, each process's end
    and error named by its producer. Several
    started together, so the cell's stopwatch is the slowest one's: its parts are the cell's, and ms/event is its
    whole over the messages they sent; each producer's own stopwatch stays in its `workers` entry."""
    several = len(seen) > 1
    counts = [one.result.counters.get("sent", one.sent) if one.result else one.sent for one in seen]
    stopwatch_ms = [one.result.timings.get("ms_per_event", 0.0) * count if one.result else -1.0
                    for one, count in zip(seen, counts)]
    slowest = max(range(len(seen)), key=stopwatch_ms.__getitem__)
    if (result := seen[slowest].result) is not None:
        run.client_version = result.client_version
        run.timings = dict(result.timings)
        if result.effective_config.get("producer"):
            run.config["producer"] = redact(result.effective_config["producer"])
        run.duration_s = stopwatch_ms[slowest] / 1000
        if several:
            run.timings["ms_per_event"] = stopwatch_ms[slowest] / max(sum(counts), 1)
            run.params["stopwatch"] = f"producer {slowest + 1}'s, the slowest of {len(seen)}"
    if told := [one.told_to_finish_s for one in seen if one.told_to_finish_s is not None]:
        run.params["sending_ended"] = {"told_s": min(told), "sent": sum(counts), "at_most": run.params["count"]}
    ended = [(number, one) for number, one in enumerate(seen, 1) if one.exit_s is not None]
    if ended:
        run.timings["exit_s"] = max(one.exit_s for _, one in ended)
        run.params["process_end"] = "; ".join((f"producer {number}: " if several else "") + process_end(cell.worker_mode, one)
                                              for number, one in ended)
    run.workers = [{**one.worker, "counters": {"sent": one.sent, "acked": one.acked},
                    **({"timings": one.result.timings} if several and one.result else {})} for one in seen if one.worker]
    run.error = "; ".join((f"producer {number}: " if several else "") + one.error
                          for number, one in enumerate(seen, 1) if one.error) or None


def process_end(mode: str, seen: ProducerRun) -> str:
    if seen.killed:
        return f"still running {seen.exit_s:g} s after its result: killed"
    how = "exited at once" if mode in ("async-exit", "async-sleep") else "ended by itself" if mode == "async-return" \
        else "closed and exited"
    return f"{how} ({seen.exit_code}) {seen.exit_s:g} s after its result"

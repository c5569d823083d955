"""The e2e probe beside a delivery cell's producers (--e2e): a consumer of the cell's client, the throughput lab's
consume worker, reads the cell's fresh topic from its start while they send, each message stamped by its producer
with its intended send time (header kb-sent-ns, this host's monotonic clock); every record's e2e latency, per
progress window, in full histograms. A window counts where the orchestrator received it, as the producers' do
(labs.delivery.latency).

The probe reads; it never judges: the exact checker reads the topic again after the run. A probe that fails leaves
the cell its verdict and says why in the cell's notes."""

from __future__ import annotations

import contextlib
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field

from kafkabench.cluster.target import Target
from kafkabench.config.translate import translate
from kafkabench.core import fleet
from kafkabench.core.protocol import ConsumeParams, Progress, Ready, Result, Start, Task, task_params
from kafkabench.core.worker_process import WorkerFailed

WINDOW_S = 0.2  # as the producers' windows
START_S = 120  # the worker started, its group joined
DRAIN_S = 30  # after the producers: how long it may take to read what they had acknowledged
FINISH_S = 30


@dataclass
class Probe:
    windows: list[tuple[float, str]] = field(default_factory=list)  # (monotonic received, encoded e2e histogram)
    received: int = 0
    unstamped: int = 0
    error: str | None = None
    worker: dict = field(default_factory=dict)  # its entry in the result's `workers`

    def summary(self) -> dict:
        return {"received": self.received, "unstamped": self.unstamped, "error": self.error}


def probe_task(producer: Task, consumer_settings: dict[str, str]) -> Task:
    """The probe's task: the producers' client, topic and timeout; the cell's consumer settings (Java names) and a
    group of its own, in the client's names."""
    group = f"kafkabench-e2e-{uuid.uuid4().hex[:8]}"
    consumer = translate(producer.client, "consumer", {**consumer_settings, "group.id": group})
    params = ConsumeParams(group=group, start_from="earliest", interval_s=WINDOW_S, idle_timeout_s=3600)
    return producer.model_copy(update={"scenario": "consume", "params": task_params(params), "producer_config": {},
                                       "consumer_config": consumer.config})


@contextlib.contextmanager
def e2e_probe(task: Task, target: Target) -> Iterator[Probe]:
    """`task` (probe_task) read from the block's start and, once the block is done, until it holds what was produced
    or DRAIN_S passed (`drain`)."""
    probe = Probe()
    worker = fleet.launch("consume", 0, target.launcher, task.client, task)
    stop = threading.Event()
    follower = threading.Thread(target=_follow, args=(worker, probe, stop), name="e2e probe", daemon=True)
    try:
        try:
            worker.process.receive(Ready, timeout_s=START_S + task.timeout_s)
            probe.worker = {"name": worker.name, "role": "e2e probe", **worker.process.placement}
            worker.process.send(Start())
            follower.start()
        except WorkerFailed as failed:  # the cell goes on without it
            probe.error = failed.reason
        yield probe
    finally:
        stop.set()
        if follower.is_alive():
            follower.join(FINISH_S + 5)
        fleet.stop_all([worker])


def drain(probe: Probe, produced: int, deadline_s: float = DRAIN_S) -> None:
    """Wait (bounded) until the probe read `produced` records: the last windows of the run then hold their e2e."""
    until = time.monotonic() + deadline_s
    while probe.error is None and probe.received < produced and time.monotonic() < until:
        time.sleep(0.05)
    if probe.error is None and probe.received < produced:
        probe.error = f"read {probe.received:,} of {produced:,} records within {deadline_s:g} s of the producers' end"


def _follow(worker: fleet.FleetWorker, probe: Probe, stop: threading.Event) -> None:
    """Its windows, as they come, until told to stop; then finished, its last windows kept."""
    try:
        while not stop.is_set():
            message = worker.process.next_message(0.05)
            _take(message, probe)
            if isinstance(message, Result):
                return
        fleet.ask_finish([worker])
        until = time.monotonic() + FINISH_S
        while time.monotonic() < until:
            message = worker.process.next_message(max(0.0, until - time.monotonic()))
            _take(message, probe)
            if isinstance(message, Result):
                return
    except WorkerFailed as failed:
        probe.error = probe.error or failed.reason


def _take(message, probe: Probe) -> None:
    if isinstance(message, Progress):
        probe.received = message.done
        if message.window is not None and "e2e" in message.window.histograms:
            probe.windows.append((time.monotonic(), message.window.histograms["e2e"]))
    elif isinstance(message, Result):
        probe.received = max(probe.received, message.counters.get("received", 0))
        probe.unstamped = message.counters.get("unstamped", 0)

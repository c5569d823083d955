"""A latency trial one record at a time (`tune latency --one-at-a-time`): the latency lab's ping-pong run with the
trial's settings, made a step the tune judges like any other."""

from __future__ import annotations

import shutil
import uuid
from pathlib import Path

from kafkabench.client_defaults import default_of
from kafkabench.cluster.target import Target
from kafkabench.core.events import Listener
from kafkabench.core.results import read_histogram
from kafkabench.labs.base import LabFailed
from kafkabench.labs.capacity.figures import record_interval
from kafkabench.labs.capacity.step import Step, judge
from kafkabench.labs.latency.scenario import LatencyScenario
from kafkabench.labs.latency.session import run_latency
from kafkabench.labs.throughput.scenario import ProduceScenario
from kafkabench.labs.tune.scenario import TuneScenario


class _NotesOnly(Listener):
    """The latency lab's notes, not its progress (the tune's progress is trials)."""

    def __init__(self, listener: Listener) -> None:
        self.listener = listener

    def note(self, message: str) -> None:
        self.listener.note(message)


def latency_scenario(s: TuneScenario, produce: ProduceScenario) -> LatencyScenario:
    """The latency lab's run of a trial: the trial's settings, acks as they are (the client's default unless set)."""
    acks = (produce.producer["acks"].value if "acks" in produce.producer
            else default_of(s.client, "producer", "acks") or "all")
    return LatencyScenario(
        clients=[s.client], payload=s.payload[0] if s.payload else None, size=s.size, count=s.count,
        warmup=s.warmup, rounds=1, pause=s.pause, acks=acks, replication_factor=s.replication_factor, timeout=s.timeout,
        topic_config=produce.topic_config, producer={k: v for k, v in produce.producer.items() if k != "acks"},
        consumer=produce.consumer)


def one_at_a_time(s: TuneScenario, produce: ProduceScenario, target: Target, out_dir: Path, listener: Listener) -> Step:
    """A ping-pong run of the latency lab with the trial's settings, as a step: its records/s achieved, its
    histograms, each SLO's percentile with a bootstrap over records, judged (there is no offered rate to reach)."""
    latency = latency_scenario(s, produce)
    where = out_dir / f"ping-pong-{uuid.uuid4().hex[:8]}"
    step, error = Step("trial", -1), None
    try:
        document = run_latency(latency, target, where, _NotesOnly(listener))
    except LabFailed as failed:
        document, error = failed.document, str(failed).split("; partial results kept in")[0]
    if document is not None and document.runs:
        run = document.runs[0]
        step.runs = [run]
        step.histograms = {metric: read_histogram(where, run, metric) for metric in run.stats}
        step.achieved = run.throughput.get("records_per_s")
        if step.achieved is not None:
            step.mb_per_s = step.achieved * document.params["size_bytes"] / 2**20
        for slo in s.slos:
            interval = record_interval(step.histograms["e2e"], slo.percentile) if "e2e" in step.histograms else None
            if interval is not None:
                step.percentiles[slo.name] = interval
    step.error = error
    shutil.rmtree(where, ignore_errors=True)
    return judge(step, s.slos, "e2e")

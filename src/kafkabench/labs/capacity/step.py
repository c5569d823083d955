"""One step: producers offer a fixed rate on an open-loop schedule with consumers reading alongside, for `settle`
seconds that are not judged and `measure` seconds that are. A step is a produce run of the throughput lab (its
own result directory under the lab's), its figures taken from the windows of the measured seconds only, then
judged. A step passes only if every check holds, and each failed check is named:

- the producers achieved at least 98 % of the offered rate;
- no send failed;
- consumer lag is not growing: the slope of the measured windows' median e2e (how old a record is when it is
  read) is not above 20 ms per second with its 95 % interval all above 0;
- every SLO holds at the upper end of its percentile's 95 % interval.

A step fails clearly when an SLO's whole interval is above its limit or the producers achieved less than 90 % of
the offered rate: more than one pause in the measured seconds explains (the search runs other failures again).
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Callable

from kafkabench.cluster.target import Target
from kafkabench.core.events import Listener
from kafkabench.core.histogram import LatencyHistogram
from kafkabench.core.results import ResultDocument, Run, stats_from
from kafkabench.core.liveness import Liveness, Sample, stalls
from kafkabench.core.timeline import TimelineEntry
from kafkabench.labs.base import LabFailed
from kafkabench.labs.capacity.figures import Interval, percentile_interval, slope_interval
from kafkabench.labs.capacity.slo import Slo
from kafkabench.labs.throughput.run import run_throughput
from kafkabench.labs.throughput.scenario import ProduceScenario

ACHIEVED_SHARE = 0.98
CLEARLY_SHORT_SHARE = 0.9
LAG_GROWTH_S_PER_S = 0.02
DRAIN_S = 5  # after a step's producers: what consumers have not read by then is lag the step already showed
METRIC_ROLE = {"e2e": "consume", "publish": "produce"}
# A Java worker's first seconds are its JVM's start and JIT, not the client's steady state. One broker, 1 KB at
# 10,000/s, 4 measured seconds, three runs each: e2e p99 33-284 ms after 2 s of settle, 27-43 after 3, 6-40
# after 4, 5-10 after 5.
JIT_SETTLE_S = {"java": 5.0}


@dataclass(frozen=True)
class Phase:
    settle_s: float
    measure_s: float

    @property
    def seconds(self) -> float:
        return self.settle_s + self.measure_s

    @property
    def window_s(self) -> float:
        """Progress windows: 1 s, shorter when the measured part is short, so it always has 10 to resample."""
        return min(1.0, self.measure_s / 10)

    def for_client(self, client: str) -> Phase:
        """At least the settle the client needs before it is in its steady state."""
        return replace(self, settle_s=max(self.settle_s, JIT_SETTLE_S.get(client, 0.0)))


def settle_note(client: str, settle_s: float) -> str | None:
    """What to tell the user when the client's steps settle longer than asked; None when they do not."""
    floor = JIT_SETTLE_S.get(client, 0.0)
    return (f"{client}: each step settles {floor:g} s, not {settle_s:g}: a JVM's first seconds are its start and JIT"
            if floor > settle_s else None)


@dataclass
class Step:
    kind: str  # search, confirm, hold, sweep, probe
    offered: float  # records/s; -1: as fast as the producers go
    search: int = 0  # which of max-rate's searches it is a step of; 0: none (the probe, a hold, a sweep)
    achieved: float | None = None  # records/s acknowledged over the measured windows
    mb_per_s: float | None = None
    errors: int = 0
    percentiles: dict[str, Interval] = field(default_factory=dict)  # "p99" -> ms of the judged metric
    lag_slope: Interval | None = None  # seconds of lag gained per second
    passed: bool = False
    clearly: bool = False  # failed by more than a pause explains
    reasons: list[str] = field(default_factory=list)  # why it failed; empty when it passed
    error: str | None = None
    histograms: dict[str, LatencyHistogram] = field(default_factory=dict, repr=False)  # measured, per metric
    windows: list[LatencyHistogram] = field(default_factory=list, repr=False)  # the judged metric's, not written
    runs: list[Run] = field(default_factory=list, repr=False)  # the produce run's own: client version, settings
    liveness: dict[str, dict] = field(default_factory=dict)  # per role: its longest stall over the whole step
    warmup: dict | None = None  # the settle seconds' own figures, kept out of the verdict: when the client steadied

    def as_run(self, client: str, params: dict) -> Run:
        """The step as a run of its lab's result: its measured histograms' stats, its rate, its errors."""
        first = self.runs[0] if self.runs else None
        return Run(client=client, client_version=first.client_version if first else "", scenario=params["kind"],
                   params=params, stats=stats_from(self.histograms),
                   throughput={"records_per_s": self.achieved, "payload_mb_per_s": self.mb_per_s} if self.achieved else {},
                   counters={"errors": self.errors}, config=first.config if first else {}, error=self.error)

    def encoded_histograms(self) -> dict[str, str]:
        return {metric: h.encode() for metric, h in self.histograms.items()}

    def to_dict(self) -> dict:
        return {"kind": self.kind, **({"search": self.search} if self.search else {}), "offered": self.offered, "achieved": self.achieved, "mb_per_s": self.mb_per_s,
                "errors": self.errors, "percentiles_ms": {name: i.as_list() for name, i in self.percentiles.items()},
                "lag_slope_s_per_s": self.lag_slope.as_list() if self.lag_slope else None,
                "verdict": "pass" if self.passed else "fail", "clearly": self.clearly, "reasons": self.reasons,
                "error": self.error, **({"liveness": self.liveness} if self.liveness else {}),
                **({"warmup": self.warmup} if self.warmup else {})}


PROBE = Phase(settle_s=1, measure_s=3)


def run_probe(produce: ProduceScenario, target: Target, out_dir: Path, listener: Listener) -> Step:
    """The producers unpaced and no consumer for PROBE's seconds: what they send as fast as they can."""
    return run_step("probe", produce.model_copy(update={"rate": -1, "consumers": 0}), PROBE, [], "publish", target,
                    out_dir, listener)


def probe_failure(probe: Step) -> str | None:
    """Why a probe gives no rate to start from; None when it does."""
    if not probe.error and probe.achieved:
        return None
    return (f"the probe failed: {probe.error or 'nothing was acknowledged'} (an unpaced probe sends more than a slow "
            "cluster acknowledges in time: give --start-rate and --ceiling to search without it)")


class _Windows(Listener):
    """The timeline entries of each role as the run relays them, passed on to the lab's listener too."""

    def __init__(self, listener: Listener) -> None:
        self.listener = listener
        self.entries: dict[str, list[TimelineEntry]] = {"produce": [], "consume": []}

    def note(self, message: str) -> None:
        self.listener.note(message)

    def window(self, role: str, entry) -> None:
        if isinstance(entry, TimelineEntry):
            self.entries.setdefault(role, []).append(entry)


def run_step(kind: str, produce: ProduceScenario, phase: Phase, slos: list[Slo], metric: str, target: Target,
             out_dir: Path, listener: Listener) -> Step:
    phase = phase.for_client(produce.client)
    scenario = produce.model_copy(update={"duration": phase.seconds, "count": None,
                                          "interval": phase.window_s})
    windows = _Windows(listener)
    error = None
    try:
        document = run_throughput(scenario, target, out_dir, windows, drain_s=DRAIN_S)
    except LabFailed as failed:
        document, error = failed.document, str(failed).split("; partial results kept in")[0]
    step = step_figures(kind, scenario.rate, windows.entries, phase, slos, metric)
    step.error, step.runs = error, document.runs
    return judge(step, slos, metric) if kind != "probe" else step


def step_figures(kind: str, offered: float, entries: dict[str, list[TimelineEntry]], phase: Phase, slos: list[Slo],
                 metric: str) -> Step:
    """The measured seconds' figures: windows that start at or after `settle` seconds from the producers' first
    window and end by the end of the measured seconds (half a window of slack for the consumers' own windows)."""
    step = Step(kind, offered)
    produced = entries.get("produce", [])
    if not produced:
        return step
    origin = min(entry.start_ns for entry in produced)
    slack = int(phase.window_s * 1e9 / 2)
    begin, end = origin + int(phase.settle_s * 1e9) - slack, origin + int(phase.seconds * 1e9) + slack
    measured = {role: [e for e in role_entries if e.start_ns >= begin and e.end_ns <= end]
                for role, role_entries in entries.items()}
    sent = measured.get("produce", [])
    if sent:
        seconds = (max(e.end_ns for e in sent) - min(e.start_ns for e in sent)) / 1e9
        step.achieved = sum(e.records for e in sent) / seconds
        step.mb_per_s = sum(e.mb_per_s * (e.end_ns - e.start_ns) / 1e9 for e in sent) / seconds
    step.errors = sum(e.errors for e in entries.get("produce", []))
    for role, role_metric in (("produce", "publish_latency"), ("consume", "e2e")):
        merged = LatencyHistogram()
        for entry in measured.get(role, []):
            merged.merge(entry.histogram())
        if merged.count:
            step.histograms[role_metric] = merged
    step.windows = [e.histogram() for e in measured.get(METRIC_ROLE[metric], [])]
    for slo in slos:
        interval = percentile_interval(step.windows, slo.percentile)
        if interval is not None:
            step.percentiles[slo.name] = interval
    step.lag_slope = _lag_slope(measured.get("consume", []))
    step.warmup = _warmup(entries.get(METRIC_ROLE[metric], []), begin, metric)
    step.liveness = {role: _liveness(role_entries, origin) for role, role_entries in entries.items() if role_entries}
    return step


def _warmup(entries: list[TimelineEntry], begin_ns: int, metric: str) -> dict | None:
    """The judged metric over the windows before the measured part: its records and percentiles, apart."""
    settling = [entry for entry in entries if entry.start_ns < begin_ns]
    merged = LatencyHistogram()
    for entry in settling:
        merged.merge(entry.histogram())
    if not merged.count:
        return None
    return {"windows": len(settling), "records": sum(entry.records for entry in settling), "metric": metric,
            **dict(zip(("p50_ms", "p99_ms", "max_ms"), merged.percentiles_ms(50, 99, 100)))}


def _liveness(entries: list[TimelineEntry], origin_ns: int) -> dict:
    """A role's liveness over the whole step (core.liveness): the longest run of windows in which its workers
    acknowledged (or received) nothing while the step was sending, from the producers' first window; a stall that
    lasts to the step's end is stuck. The windows' length is its resolution."""
    samples, total = [Sample(origin_ns / 1e9, 0, True)], 0
    for entry in sorted(entries, key=lambda entry: entry.end_ns):
        total += entry.records
        samples.append(Sample(entry.end_ns / 1e9, total, True))
    return Liveness.of(stalls(samples, samples[-1].t_s, "stuck")).to_dict(origin_s=origin_ns / 1e9)


def _lag_slope(consumed: list[TimelineEntry]) -> Interval | None:
    """How far behind the consumers are, in seconds, at each measured window: the median age of what they received
    in it (e2e from the intended send time, so a record that waited anywhere counts); its slope over time."""
    times, lags = [], []
    for window in consumed:
        histogram = window.histogram()
        if histogram.count:
            times.append(window.end_ns / 1e9)
            lags.append(histogram.value_at_percentile_ms(50) / 1000)
    return slope_interval(times, lags)


def judge(step: Step, slos: list[Slo], metric: str) -> Step:
    reasons = []
    if step.error:
        reasons.append(f"the run failed: {step.error}")
    if step.achieved is None:
        reasons.append("no measured window: the step ended before its measured seconds")
    elif step.offered > 0 and step.achieved < ACHIEVED_SHARE * step.offered:
        reasons.append(f"achieved {step.achieved:,.0f} records/s, {step.achieved / step.offered:.1%} of the offered "
                       f"rate (needs {ACHIEVED_SHARE:.0%})")
    if step.errors:
        reasons.append(f"{step.errors:,} sends failed")
    if step.lag_slope is not None and step.lag_slope.low > 0 and step.lag_slope.value > LAG_GROWTH_S_PER_S:
        reasons.append(f"consumer lag grew {step.lag_slope.value * 1000:,.0f} ms per second "
                       f"(95 % from {step.lag_slope.low * 1000:,.0f})")
    for slo in slos:
        interval = step.percentiles.get(slo.name)
        if interval is None:
            reasons.append(f"no {metric} latency measured for {slo.name}")
        elif interval.high > slo.limit_ms:
            reasons.append(f"{metric} {slo.name} {interval.value:,.3g} ms (95 % up to {interval.high:,.3g}) > "
                           f"{slo.limit_ms:g} ms")
    step.reasons, step.passed = reasons, not reasons
    short = step.offered > 0 and step.achieved is not None and step.achieved < CLEARLY_SHORT_SHARE * step.offered
    step.clearly = bool(reasons) and (short or any(
        step.percentiles[slo.name].low > slo.limit_ms for slo in slos if slo.name in step.percentiles))
    return step


class StepsEnded(Exception):
    """A step whose run failed: the cluster or the client broke, not the rate or the settings."""


def run_steps(document: ResultDocument, scratch: Path, write: Callable[[], None], work: Callable[[], None]) -> None:
    """Run a lab made of steps: an interruption or a failed step ends it with the error in the document, the steps'
    scratch directory removed and what was measured written either way."""
    try:
        work()
    except KeyboardInterrupt:
        document.error = "interrupted"
    except StepsEnded as ended:
        document.error = str(ended)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
        write()

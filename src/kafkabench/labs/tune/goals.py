"""What a trial measures, per goal. Both are built on the capacity lab's step (a produce run with consumers alongside,
its measured seconds judged: rate achieved, no send failed, lag not growing, every SLO at the upper end of its 95 %
interval).

- latency: one step at --rate; the objective is the e2e percentile (--objective) with its interval, minimised.
- throughput: a short max-rate search; the objective is the highest rate that passed, maximised. A probe (producers
  unpaced) comes first; a trial that cannot beat the best rate found so far is stopped early, and says why: its probe
  is below that rate, or a step at that rate plus the precision fails.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from kafkabench.cluster.target import Target
from kafkabench.core.events import Listener
from kafkabench.labs.capacity.figures import Interval, percentile_interval
from kafkabench.labs.capacity.run import CEILING_FACTOR, PROBE, START_SHARE
from kafkabench.labs.capacity.search import RateSearch
from kafkabench.labs.capacity.step import Phase, Step, run_step
from kafkabench.labs.throughput.scenario import ProduceScenario
from kafkabench.labs.tune.scenario import TuneScenario


@dataclass
class Measured:
    objective: Interval | None  # latency: ms, minimised; throughput: records/s (passed, passed, lowest failed)
    steps: list[Step]  # every run it took, in order
    judged: Step | None  # the step whose figures decide: the latency step, or the search's step at the found rate
    reasons: list[str] = field(default_factory=list)  # why it does not meet every check; empty when it does
    pruned: str | None = None  # stopped early: it cannot beat the best found so far

    @property
    def feasible(self) -> bool:
        return self.objective is not None and not self.reasons and self.pruned is None


class LatencyGoal:
    name, direction, better, unit = "latency", "minimize", "lower", "ms"

    def __init__(self, scenario: TuneScenario) -> None:
        self.scenario = scenario
        self.metric = f"e2e {scenario.objective}"

    def measure(self, produce: ProduceScenario, target: Target, out_dir: Path, listener: Listener,
                incumbent: float | None) -> Measured:
        s = self.scenario
        step = run_step("trial", produce.model_copy(update={"rate": s.rate}), Phase(s.settle, s.measure), s.slos,
                        "e2e", target, out_dir, listener)
        objective = percentile_interval(step.windows, s.objective_percentile) if step.windows else None
        reasons = list(step.reasons) + ([] if objective else ["no e2e measured"])
        return Measured(objective, [step], step, reasons)

    def constraints(self, measured: Measured) -> dict[str, float]:
        """Optuna's form (<= 0 is met): each SLO's upper end against its limit, relative; then `checks`: 1 when any
        other check failed (rate not achieved, sends failed, lag growing, the run failed), else -1."""
        step, slos = measured.judged, self.scenario.slos
        values = {f"e2e {slo.name}": (step.percentiles[slo.name].high - slo.limit_ms) / slo.limit_ms
                  if step and slo.name in step.percentiles else 1.0 for slo in slos}
        others = [r for r in measured.reasons if not any(f" {slo.name} " in r for slo in slos)]
        values["checks"] = 1.0 if others else -1.0
        return values

    def text(self, objective: Interval) -> str:
        return f"{self.metric} {objective.value:,.3g} ms (95 % {objective.low:,.3g}-{objective.high:,.3g})"

    def value_text(self, value: float) -> str:
        return f"{value:,.3g} ms"


class ThroughputGoal:
    name, direction, better, unit = "throughput", "maximize", "higher", "records/s"
    metric = "sustainable records/s"

    def __init__(self, scenario: TuneScenario) -> None:
        self.scenario = scenario

    def measure(self, produce: ProduceScenario, target: Target, out_dir: Path, listener: Listener,
                incumbent: float | None) -> Measured:
        s = self.scenario
        phase = Phase(s.settle, s.measure)

        def step(kind: str, rate: float) -> Step:
            done = run_step(kind, produce.model_copy(update={"rate": rate}), phase, s.slos, "e2e", target, out_dir,
                            listener)
            steps.append(done)
            return done

        probe = run_step("probe", produce.model_copy(update={"rate": -1, "consumers": 0}), PROBE, [], "publish",
                         target, out_dir, listener)
        steps = [probe]
        if probe.error or not probe.achieved:
            return Measured(None, steps, None, [f"the probe failed: {probe.error or 'nothing was acknowledged'}"])
        ceiling = CEILING_FACTOR * probe.achieved
        if incumbent is not None:
            beat = incumbent * (1 + s.precision)
            if beat > ceiling:
                return Measured(None, steps, None, pruned=f"unpaced it sent {probe.achieved:,.0f} records/s: it cannot "
                                                          f"sustain {beat:,.0f}, the best so far plus the precision")
            first = step("trial", beat)
            if not first.passed:
                return Measured(None, steps, first, pruned=f"{beat:,.0f} records/s, the best so far plus the precision, "
                                                           f"failed: {'; '.join(first.reasons)}")
            search = RateSearch(beat, s.precision, s.max_steps, ceiling, floor=min(1.0, beat))
            search.record(beat, True)
        else:
            start = START_SHARE * probe.achieved
            search = RateSearch(start, s.precision, s.max_steps, ceiling, floor=min(1.0, start))
        while (rate := search.next_rate()) is not None:
            ran = step("trial", rate)
            search.record(rate, ran.passed, ran.clearly)
        found = search.passed
        if found is None:
            return Measured(None, steps, None, [f"no rate passed ({search.stop_reason})"])
        judged = next(st for st in reversed(steps) if st.kind == "trial" and st.passed and st.offered == found)
        return Measured(Interval(found, found, search.failed or found), steps, judged)

    def constraints(self, measured: Measured) -> dict[str, float]:
        """The SLOs and the other checks are inside the search (the found rate passed them all): one constraint."""
        return {"checks": -1.0 if measured.feasible else 1.0}

    def text(self, objective: Interval) -> str:
        above = f", {objective.high:,.0f} failed" if objective.high > objective.value else ""
        return f"sustainable {objective.value:,.0f} records/s{above}"

    def value_text(self, value: float) -> str:
        return f"{value:,.0f} records/s"


Goal = LatencyGoal | ThroughputGoal
GOALS = {"latency": LatencyGoal, "throughput": ThroughputGoal}

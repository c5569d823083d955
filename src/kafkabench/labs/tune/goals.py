"""What a trial measures, per goal. Each is built on the capacity lab's step (a produce run with consumers alongside,
its measured seconds judged: rate achieved, no send failed, lag not growing, every SLO at the upper end of its 95 %
interval).

- latency: one step at --rate; the objective is the e2e percentile (--objective) with its interval, minimised.
  With --one-at-a-time, a ping-pong run of the latency lab instead (one record sent, the next once it was read),
  the interval a bootstrap over records (each had the system to itself), the SLOs judged the same way.
- throughput: a short max-rate search; the objective is the highest rate that passed, maximised. A probe (producers
  unpaced) comes first; a trial that cannot beat the best rate found so far is stopped early, and says why: its probe
  is below that rate, or a step at that rate plus the precision fails (twice, unless clearly).
- pareto: one step at a rate the sampler proposes with the settings; two objectives, e2e p99 minimised and the
  records/s achieved maximised, with the same checks as constraints.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from kafkabench.cluster.target import Target
from kafkabench.core.events import SILENT, Listener
from kafkabench.errors import ConfigError
from kafkabench.labs.capacity.figures import Interval, percentile_interval, record_interval
from kafkabench.labs.capacity.run import CEILING_FACTOR, START_SHARE
from kafkabench.labs.capacity.search import RateSearch
from kafkabench.labs.capacity.step import Phase, Step, probe_failure, run_probe, run_step
from kafkabench.labs.latency.session import plan_latency
from kafkabench.labs.throughput.scenario import ProduceScenario
from kafkabench.labs.tune.ping_pong import latency_scenario, one_at_a_time
from kafkabench.labs.tune.scenario import TuneScenario


@dataclass
class Measured:
    objective: Interval | None  # latency: ms, minimised; throughput: records/s (passed, passed, lowest failed)
    steps: list[Step]  # every run it took, in order
    judged: Step | None  # the step whose figures decide: the latency step, or the search's step at the found rate
    reasons: list[str] = field(default_factory=list)  # why it does not meet every check; empty when it does
    pruned: str | None = None  # stopped early: it cannot beat the best found so far
    bound: float | None = None  # stopped early: the value it cannot reach (the study is told it, as infeasible)

    @property
    def feasible(self) -> bool:
        return self.objective is not None and not self.reasons and self.pruned is None


class LatencyGoal:
    name, directions, better, unit = "latency", ("minimize",), "lower", "ms"

    def __init__(self, scenario: TuneScenario) -> None:
        self.scenario = scenario
        self.percentile = scenario.objective_percentile
        self.metric = f"e2e {scenario.objective}"

    def measure(self, produce: ProduceScenario, target: Target, out_dir: Path, listener: Listener,
                incumbent: float | None) -> Measured:
        """One step at the produce run's rate (--rate, or the pareto trial's)."""
        s = self.scenario
        if s.one_at_a_time:
            step = one_at_a_time(s, produce, target, out_dir, listener)
            histogram = step.histograms.get("e2e")
            objective = record_interval(histogram, self.percentile) if histogram else None
        else:
            step = run_step("trial", produce, Phase(s.settle, s.measure), s.slos, "e2e", target, out_dir, listener)
            objective = percentile_interval(step.windows, self.percentile) if step.windows else None
        reasons = list(step.reasons) + ([] if objective else ["no e2e measured"])
        return Measured(objective, [step], step, reasons)

    def values(self, measured: Measured) -> list[float]:
        """What the study is told (one per direction)."""
        return [measured.objective.value]

    def refusal(self, produce: ProduceScenario) -> str | None:
        """Why the latency lab would not run the trial one at a time (the produce run is checked apart)."""
        if not self.scenario.one_at_a_time:
            return None
        try:
            plan_latency(latency_scenario(self.scenario, produce), SILENT)
        except ConfigError as exc:
            return str(exc)
        return None

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
    name, directions, better, unit = "throughput", ("maximize",), "higher", "records/s"
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

        probe = run_probe(produce, target, out_dir, listener)
        steps = [probe]
        if probe_failure(probe):
            return Measured(None, steps, None, [probe_failure(probe)])
        ceiling = CEILING_FACTOR * probe.achieved
        if incumbent is not None:
            beat = incumbent * (1 + s.precision)
            if beat > ceiling:
                return Measured(None, steps, None, bound=ceiling,
                                pruned=f"unpaced it sent {probe.achieved:,.0f} records/s: it cannot sustain "
                                       f"{beat:,.0f}, the best so far plus the precision")
            search = RateSearch(beat, s.precision, s.max_steps, ceiling, floor=min(1.0, beat))
            while search.passed is None and search.next_rate() == beat:  # a pause is run again, as in any search
                first = step("trial", beat)
                search.record(beat, first.passed, first.clearly)
            if search.passed is None:
                return Measured(None, steps, first, bound=beat,
                                pruned=f"{beat:,.0f} records/s, the best so far plus the precision, failed: "
                                       f"{'; '.join(first.reasons)}")
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

    def values(self, measured: Measured) -> list[float]:
        return [measured.objective.value if measured.objective else measured.bound]

    def refusal(self, produce: ProduceScenario) -> str | None:
        return None


class ParetoGoal(LatencyGoal):
    """The latency goal's step at the trial's own rate; the records/s it achieved is the second objective."""
    name, directions, better, unit = "pareto", ("minimize", "maximize"), "lower", "ms"

    def __init__(self, scenario: TuneScenario) -> None:
        super().__init__(scenario)
        self.percentile, self.metric = 99.0, "e2e p99"

    def values(self, measured: Measured) -> list[float]:
        return [measured.objective.value, measured.judged.achieved or 0.0]


Goal = LatencyGoal | ThroughputGoal | ParetoGoal
GOALS = {"latency": LatencyGoal, "throughput": ThroughputGoal, "pareto": ParetoGoal}

"""One trial: the tune's workload with one set of settings, refused before it runs when the client would refuse it,
else measured as a capacity step at the tune's rate (a produce run with consumers alongside; its measured seconds
judged as max-rate judges a step: rate achieved, no send failed, lag not growing, every SLO at the upper end of its
95 % interval)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from kafkabench.cluster.target import Target
from kafkabench.config.properties import Setting
from kafkabench.core.events import SILENT, Listener
from kafkabench.errors import ConfigError
from kafkabench.labs.capacity.figures import Interval, percentile_interval
from kafkabench.labs.capacity.step import Phase, Step, run_step
from kafkabench.labs.throughput.plan import plan_throughput
from kafkabench.labs.throughput.scenario import ProduceScenario
from kafkabench.labs.tune.scenario import TuneScenario

Settings = dict[str, dict[str, str]]  # role -> name -> value
SETTINGS_FIELD = {"producer": "producer", "consumer": "consumer", "topic": "topic_config"}


@dataclass
class Measured:
    objective: Interval | None  # ms: the e2e percentile the tune minimises, with its 95 % interval
    step: Step

    @property
    def feasible(self) -> bool:
        return self.step.passed and self.objective is not None

    def constraints(self, scenario: TuneScenario) -> dict[str, float]:
        """Optuna's form (<= 0 is met): each SLO's upper end against its limit, relative; then `checks`, 1 when any
        other check failed (rate not achieved, sends failed, lag growing, the run failed), else -1."""
        values = {}
        for slo in scenario.slos:
            interval = self.step.percentiles.get(slo.name)
            values[f"e2e {slo.name}"] = (interval.high - slo.limit_ms) / slo.limit_ms if interval else 1.0
        others = [r for r in self.step.reasons if not any(f" {slo.name} " in r for slo in scenario.slos)]
        values["checks"] = 1.0 if others or self.objective is None else -1.0
        return values


def trial_scenario(scenario: TuneScenario, settings: Settings, source: str) -> ProduceScenario:
    """The produce run of a trial: the user's workload and settings, with the trial's on top."""
    workload = scenario.workload()
    for role, field in SETTINGS_FIELD.items():
        workload[field] = {**workload[field], **{k: Setting(v, source) for k, v in settings.get(role, {}).items()}}
    return ProduceScenario(**workload, rate=scenario.rate, duration=scenario.settle + scenario.measure)


def refusal(produce: ProduceScenario) -> str | None:
    """Why the client would not run these settings, asked before a trial: every name in its vocabulary, every size
    limit large enough for the payload, and librdkafka's whole configuration handed to the library, which refuses
    combinations (`linger.ms` above `message.timeout.ms`, idempotence with more than 5 in flight)."""
    try:
        plan_throughput(produce, SILENT)
    except ConfigError as exc:
        return str(exc)
    return None


def measure(scenario: TuneScenario, produce: ProduceScenario, target: Target, out_dir: Path,
            listener: Listener) -> Measured:
    step = run_step("trial", produce, Phase(scenario.settle, scenario.measure), scenario.slos, "e2e", target,
                    out_dir, listener)
    objective = percentile_interval(step.windows, scenario.objective_percentile) if step.windows else None
    return Measured(objective, step)

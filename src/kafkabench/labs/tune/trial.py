"""A trial's workload: the user's, with the trial's settings on top; refused before it runs when the client would
refuse it (goals.py measures it)."""

from __future__ import annotations

from kafkabench.config.properties import Setting
from kafkabench.core.events import SILENT
from kafkabench.errors import ConfigError
from kafkabench.labs.throughput.plan import plan_throughput
from kafkabench.labs.throughput.scenario import ProduceScenario
from kafkabench.labs.tune.scenario import TuneScenario

Settings = dict[str, dict[str, str]]  # role -> name -> value
SETTINGS_FIELD = {"producer": "producer", "consumer": "consumer", "topic": "topic_config"}


def trial_scenario(scenario: TuneScenario, settings: Settings, source: str) -> ProduceScenario:
    """The produce run of a trial: the user's workload and settings, with the trial's on top."""
    workload = scenario.workload()
    for role, field in SETTINGS_FIELD.items():
        workload[field] = {**workload[field], **{k: Setting(v, source) for k, v in settings.get(role, {}).items()}}
    return ProduceScenario(**workload, rate=scenario.rate, duration=scenario.settle + scenario.measure, broker_phases=False)


def refusal(produce: ProduceScenario) -> str | None:
    """Why the client would not run these settings, asked before a trial: every name in its vocabulary, every size
    limit large enough for the payload, and librdkafka's whole configuration handed to the library, which refuses
    combinations (`linger.ms` above `message.timeout.ms`, idempotence with more than 5 in flight)."""
    try:
        plan_throughput(produce, SILENT)
    except ConfigError as exc:
        return str(exc)
    return None

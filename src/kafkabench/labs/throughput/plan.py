"""What a throughput run is asked, made ready before any worker starts: the payloads, the client settings as
the client names them, the consumer group. `check` and `run` share it, and so do the labs built on produce
runs (durability, capacity) and Apache's perf tools beside them."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from kafkabench import clients as client_registry
from kafkabench.config.client_settings import ClientSettings, fit_payload
from kafkabench.config.translate import translate
from kafkabench.core.events import Listener
from kafkabench.errors import ConfigError
from kafkabench.labs.payload import Payload
from kafkabench.labs.throughput.scenario import ConsumeScenario, ProduceScenario

Streaming = ProduceScenario | ConsumeScenario


@dataclass
class ThroughputPlan:
    scenario: Streaming
    payloads: list[Payload]  # made when a run writes them (payload_files), not when it is checked
    settings: ClientSettings
    producer_config: dict
    consumer_config: dict
    not_applicable: dict[str, list[str]]
    group: str

    @property
    def role(self) -> str:
        return self.scenario.lab


@contextmanager
def payload_files(plan: ThroughputPlan, out_dir: Path) -> Iterator[list[Path]]:
    """The payloads as files the launcher shares with workers, removed afterwards."""
    run_id = uuid.uuid4().hex[:8]
    paths = [out_dir / f".payload-{run_id}-{index}.bin" for index in range(len(plan.payloads))]
    try:
        for path, payload in zip(paths, plan.payloads):
            payload.write(path)
        yield paths
    finally:
        for path in paths:
            path.unlink(missing_ok=True)


def load_payloads(scenario: Streaming) -> list[Payload]:
    if not scenario.payload:
        return [Payload.generated(scenario.size, seed=scenario.size)]  # incompressible, the same every run
    return [Payload.of_file(path) for path in scenario.payload]


def plan_throughput(scenario: Streaming, listener: Listener, start_from: str | None = None) -> ThroughputPlan:
    """`start_from`: where consumers of a group without offsets start; default latest for produce (consumers read
    alongside), the scenario's for consume."""
    if scenario.count is None and scenario.duration is None:
        raise ConfigError("give --count or --duration")
    if scenario.client not in client_registry.KAFKA_CLIENTS:
        raise ConfigError(f"--client {scenario.client}: the throughput lab runs Kafka clients: {', '.join(client_registry.KAFKA_CLIENTS)}")
    status = client_registry.availability(scenario.client)
    if not status.available:
        raise ConfigError(f"--client {scenario.client} cannot run here: {status.reason}")
    payloads = load_payloads(scenario)
    group = getattr(scenario, "group", None) or f"kafkabench-{uuid.uuid4().hex[:8]}"
    producer = {key: value for key, value in (("acks", getattr(scenario, "acks", None)),
                                              ("compression.type", getattr(scenario, "compression", None))) if value}
    start_from = start_from or ("latest" if scenario.lab == "produce" else scenario.start_from)
    settings = scenario.settings({"producer": producer, "consumer": {"group.id": group, "auto.offset.reset": start_from}})
    fit_payload(settings, max(len(p) for p in payloads))
    for line in settings.notes:
        listener.note(f"set {line}")
    translated = {role: translate(scenario.client, role, settings.values(role)) for role in ("producer", "consumer")}
    for role, t in translated.items():
        if t.not_applicable:
            listener.note(f"{scenario.client} has no {role} setting for {', '.join(t.not_applicable)}: not applied")
    return ThroughputPlan(scenario, payloads, settings, translated["producer"].config, translated["consumer"].config,
                          {role: t.not_applicable for role, t in translated.items() if t.not_applicable}, group)

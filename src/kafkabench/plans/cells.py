"""A plan expanded into cells: scenario x profile (x client, for the labs that run one client at a time) x
repeat, each turned into the request its lab takes and checked before any cluster is touched.

Repeats are interleaved (every cell once, then every cell again), so drift on a shared machine is spread over
all cells instead of landing on the last ones.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from pathlib import Path

from kafkabench.config.properties import Setting
from kafkabench.errors import ConfigError
from kafkabench.labs.compression import CompressionRequest, check_request
from kafkabench.labs.latency import LatencyRequest, plan_latency
from kafkabench.labs.throughput import ThroughputRequest, plan_throughput
from kafkabench.plans.loading import LoadedPlan, PlanError
from kafkabench.plans.model import CompressionScenario, ConsumeScenario, LatencyScenario, Profile, ProduceScenario

# a parameter of the scenario and the setting a profile may also set: both at once is ambiguous
_SAME_KNOB = {"acks": "acks", "compression": "compression.type"}


@dataclass(frozen=True)
class Cell:
    index: int  # 1-based, in run order
    scenario: str
    lab: str
    profile: str
    clients: tuple[str, ...] | None  # None: every client available here (latency)
    repeat: int  # 1-based
    request: object = field(compare=False)  # LatencyRequest | ThroughputRequest | CompressionRequest

    @property
    def name(self) -> str:
        """Same for every repeat of a cell: what `compare` matches on."""
        client = f"-{self.clients[0]}" if self.clients and len(self.clients) == 1 and self.lab != "latency" else ""
        return f"{self.scenario}-{self.profile}{client}"

    @property
    def directory(self) -> str:
        return f"{self.index:03d}-{self.name}-r{self.repeat}"

    def metadata(self, plan: str) -> dict:
        return {"plan": plan, "cell": self.name, "scenario": self.scenario, "lab": self.lab, "profile": self.profile,
                "clients": list(self.clients) if self.clients else None, "repeat": self.repeat}


def expand(loaded: LoadedPlan) -> list[Cell]:
    plan = loaded.plan
    names = scenario_names(loaded)
    shapes = []
    for position, scenario in enumerate(plan.scenarios):
        where = f"{loaded.source}: scenarios -> {position + 1} ({names[position]})"
        clients = scenario.clients or (plan.clients if "clients" in plan.model_fields_set or not scenario.clients_together else None)
        for profile in scenario.profiles or plan.profiles:
            groups = [tuple(clients)] if scenario.clients_together and clients else [(c,) for c in clients] if clients else [None]
            for group in groups:
                request = build_request(scenario, loaded.profiles[profile], profile, group, loaded.base, where)
                shapes.append((names[position], scenario.lab, profile, group, request))
    cells = []
    for repeat in range(1, plan.repeats + 1):
        for scenario, lab, profile, group, request in shapes:
            cells.append(Cell(len(cells) + 1, scenario, lab, profile, group, repeat, request))
    return cells


def scenario_names(loaded: LoadedPlan) -> list[str]:
    """The given names, else the lab's (numbered when a lab comes back); two scenarios may not share one."""
    names, seen = [], {}
    for scenario in loaded.plan.scenarios:
        seen[scenario.lab] = seen.get(scenario.lab, 0) + 1
        names.append(scenario.name or (scenario.lab if seen[scenario.lab] == 1 else f"{scenario.lab}{seen[scenario.lab]}"))
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise PlanError(f"{loaded.source}: scenarios: two scenarios are named {duplicates[0]!r}; give them different `name:`s")
    return names


def build_request(scenario, profile: Profile, profile_name: str, clients: tuple[str, ...] | None, base: Path | None, where: str):
    settings = {role: _layer(profile.role(role), f"profile {profile_name}", scenario.role(role), where) for role in ("producer", "consumer", "topic")}
    for knob, key in _SAME_KNOB.items():
        if getattr(scenario, knob, None) is not None and key in profile.producer:
            raise PlanError(f"{where}: sets {knob} and profile {profile_name} sets {key}; keep one")
    common = dict(producer_file=settings["producer"], consumer_file=settings["consumer"])
    try:
        request = _request(scenario, settings, common, clients, base, where)
        if isinstance(request, LatencyRequest):  # settings, payload, clients: as the lab checks them, on a copy
            plan_latency(copy.deepcopy(request), Silent())
        elif isinstance(request, ThroughputRequest):
            plan_throughput(copy.deepcopy(request), Silent())
        return request
    except ConfigError as exc:
        raise PlanError(f"{where}: {exc}") from None


def _request(scenario, settings: dict, common: dict, clients: tuple[str, ...] | None, base: Path | None, where: str):
    if isinstance(scenario, LatencyScenario):
        return LatencyRequest(size=scenario.size, payload_file=_path(scenario.payload, base), count=scenario.count,
                              warmup=scenario.warmup, rounds=scenario.rounds, clients=list(clients) if clients else None,
                              acks=scenario.acks or "1", replication_factor=scenario.replication_factor,
                              topic_config=settings["topic"], timeout_s=scenario.timeout or 30, **common)
    if isinstance(scenario, ProduceScenario):
        return ThroughputRequest(role="produce", size=scenario.size, count=scenario.count, duration_s=scenario.duration,
                                 rate=scenario.rate, producers=scenario.producers, consumers=scenario.consumers,
                                 partitions=scenario.partitions, replication_factor=scenario.replication_factor,
                                 acks=scenario.acks, compression=scenario.compression, client=clients[0],
                                 topic_config=settings["topic"], timeout_s=scenario.timeout or 30, **common)
    if isinstance(scenario, ConsumeScenario):
        return ThroughputRequest(role="consume", topic="(filled by the runner)", size=scenario.size, count=scenario.count,
                                 consumers=scenario.consumers, partitions=scenario.partitions, client=clients[0],
                                 check=True, topic_config=settings["topic"], timeout_s=scenario.timeout or 30, **common)
    if isinstance(scenario, CompressionScenario):
        return _compression_request(scenario, settings, clients[0], base, where)
    raise AssertionError(f"no request for lab {scenario.lab}")


def _compression_request(scenario: CompressionScenario, settings: dict, client: str, base: Path | None, where: str):
    varied = sorted(k for k in settings["producer"] if k.startswith("compression."))
    if varied:
        raise PlanError(f"{where}: the compression lab varies {varied[0]} itself; drop it from the profile or scenario")
    if settings["consumer"] or settings["topic"]:
        raise PlanError(f"{where}: the compression lab takes producer settings only")
    dataset = scenario.dataset
    if dataset.lower().endswith(".csv") and base is not None and not Path(dataset).is_absolute():
        dataset = str(base / dataset)
    request = CompressionRequest(rows=scenario.rows, formats=list(scenario.formats), codecs=list(scenario.codecs),
                                 levels={k: list(v) for k, v in scenario.levels.items()}, dataset=dataset, client=client,
                                 repeats=scenario.repeats, producer_file=settings["producer"], timeout_s=scenario.timeout or 60)
    check_request(request)
    return request


class Silent:
    """A lab listener that listens to nothing: checks before the run, and set-up the run does not report."""

    def note(self, message: str) -> None:
        pass

    def window(self, role: str, entry: dict) -> None:
        pass

    def done(self, role: str, records: int) -> None:
        pass


def _layer(profile: dict[str, str], profile_source: str, scenario: dict[str, str], scenario_source: str) -> dict[str, Setting]:
    return {**{k: Setting(v, profile_source) for k, v in profile.items()},
            **{k: Setting(v, scenario_source) for k, v in scenario.items()}}


def _path(value: Path | None, base: Path | None) -> Path | None:
    if value is None or value.is_absolute() or base is None:
        return value
    return base / value

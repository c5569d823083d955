"""A plan expanded into cells: scenario x profile (x client, for the labs that run one client at a time) x
repeat, each a lab's scenario with the profile's settings layered in, checked by its lab before any cluster
is touched.

Repeats are interleaved (every cell once, then every cell again), so drift on a shared machine is spread over
all cells instead of landing on the last ones.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

from kafkabench.cluster.variant import BrokerVariant
from kafkabench.config.properties import Setting
from kafkabench.errors import ConfigError
from kafkabench.labs import registry
from kafkabench.labs.scenario import Knob, Scenario, field_metadata, settings_roles
from kafkabench.plans.loading import LoadedPlan, PlanError
from kafkabench.plans.model import PlanScenario, Profile


@dataclass(frozen=True)
class Cell:
    index: int  # 1-based, in run order
    name_in_plan: str  # the scenario's name
    lab: str
    profile: str
    clients: tuple[str, ...] | None  # None: every client available here (a lab that runs several side by side)
    repeat: int  # 1-based
    scenario: Scenario = field(compare=False)
    round: str = "plan"  # "confirm": a confirmation round's (plans.confirm)
    own_cluster: BrokerVariant | None = field(default=None, compare=False)  # None: the cluster the cells share
    own_brokers: int | None = field(default=None, compare=False)  # its broker count; None: the plan's

    @property
    def name(self) -> str:
        """Same for every repeat of a cell: what `compare` matches on."""
        one = self.clients and len(self.clients) == 1 and (not self.scenario.clients_together or self.own_cluster)
        return f"{self.name_in_plan}-{self.profile}" + (f"-{self.clients[0]}" if one else "")

    @property
    def directory(self) -> str:
        return f"{self.index:03d}-{self.name}-r{self.repeat}"

    def metadata(self, plan: str) -> dict:
        return {"plan": plan, "cell": self.name, "scenario": self.name_in_plan, "lab": self.lab, "profile": self.profile,
                "clients": list(self.clients) if self.clients else None, "repeat": self.repeat,
                **({"round": self.round} if self.round != "plan" else {})}


def expand(loaded: LoadedPlan) -> list[Cell]:
    plan = loaded.plan
    names = scenario_names(loaded)
    shapes = []
    for position, planned in enumerate(loaded.scenarios):
        where = f"{loaded.source}: scenarios -> {position + 1} ({names[position]})"
        together = planned.scenario.clients_together
        clients = planned.keys.clients or (plan.clients if "clients" in plan.model_fields_set or not together else None)
        if not planned.scenario.takes_clients:
            clients = None
        alone = not together or planned.keys.own_cluster  # a cluster of its own: one client's changes each
        groups = [(c,) for c in clients] if clients and alone else [tuple(clients)] if clients else [None]
        for profile in planned.keys.profiles or plan.profiles:
            for group in groups:
                scenario = build_scenario(planned, loaded.profiles[profile], profile, group, loaded, where)
                own = own_cluster(planned, loaded.profiles[profile], profile, where)
                needs = registry.get(planned.lab).brokers_for(scenario)
                if own is not None and planned.keys.brokers is not None and planned.keys.brokers < needs:
                    raise PlanError(f"{where}: brokers {planned.keys.brokers}: its cells need {needs} (their "
                                    "replication factor); give more, or a smaller replication factor")
                shapes.append((names[position], planned.lab, profile, group, scenario, own))
    for name in dict.fromkeys(shape[2] for shape in shapes):  # the broker as a variable, before it starts
        try:
            loaded.profiles[name].variant().check(where=f"{loaded.source}: profile {name}")
        except ConfigError as exc:
            raise PlanError(str(exc)) from None
    cells = []
    for repeat in range(1, plan.repeats + 1):
        for scenario_name, lab, profile, group, scenario, own in shapes:
            cells.append(Cell(len(cells) + 1, scenario_name, lab, profile, group, repeat, scenario, own_cluster=own,
                              own_brokers=loaded.scenarios[names.index(scenario_name)].keys.brokers))
    return cells


def own_cluster(planned: PlanScenario, profile: Profile, profile_name: str, where: str) -> BrokerVariant | None:
    """The brokers a scenario's `own_cluster` starts for each of its cells: the profile's, on the scenario's release."""
    if not planned.keys.own_cluster:
        return None
    variant = profile.variant()
    if planned.keys.kafka_version is not None:
        if profile.kafka_version not in (None, planned.keys.kafka_version):
            raise PlanError(f"{where}: kafka_version {planned.keys.kafka_version} and profile {profile_name}'s "
                            f"{profile.kafka_version}; keep one")
        variant = dataclasses.replace(variant, kafka_version=planned.keys.kafka_version)
    try:
        variant.check(where=f"{where}: kafka_version")
    except ConfigError as exc:
        raise PlanError(str(exc)) from None
    return variant


def scenario_names(loaded: LoadedPlan) -> list[str]:
    """The given names, else the lab's (numbered when a lab comes back); two scenarios may not share one."""
    names, seen = [], {}
    for planned in loaded.scenarios:
        seen[planned.lab] = seen.get(planned.lab, 0) + 1
        names.append(planned.keys.name or (planned.lab if seen[planned.lab] == 1 else f"{planned.lab}{seen[planned.lab]}"))
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise PlanError(f"{loaded.source}: scenarios: two scenarios are named {duplicates[0]!r}; give them different `name:`s")
    return names


def build_scenario(planned: PlanScenario, profile: Profile, profile_name: str, clients: tuple[str, ...] | None,
                   loaded: LoadedPlan, where: str) -> Scenario:
    """The lab's scenario with the profile's settings under the scenario's own, for these clients, checked by its lab."""
    scenario = planned.scenario
    model = type(scenario)
    roles = settings_roles(model)
    for role in ("producer", "consumer", "topic"):
        if profile.role(role) and role not in roles:
            raise PlanError(f"{where}: profile {profile_name} sets {role} settings; the {scenario.lab} lab takes none")
    for name in planned.given:
        knob = field_metadata(model, name, Knob) if name in model.model_fields else None
        if knob is not None and knob.key in profile.role(knob.role):
            raise PlanError(f"{where}: sets {name} and profile {profile_name} sets {knob.key}; keep one")
    layered = {field_name: _layer(profile.role(role), f"profile {profile_name}", getattr(scenario, field_name), where)
               for role, field_name in roles.items()}
    try:
        scenario = scenario.model_copy(update=layered)
        scenario = scenario.with_clients(clients) if clients else scenario
        scenario = scenario.rebased(loaded.base) if loaded.base is not None else scenario
        registry.get(scenario.lab).check(scenario)
    except ConfigError as exc:
        message = str(exc)  # a setting's own source already says where it is
        raise PlanError(message if message.startswith(where) else f"{where}: {message}") from None
    return scenario


def _layer(profile: dict[str, str], profile_source: str, scenario: dict[str, Setting], where: str) -> dict[str, Setting]:
    return {**{k: Setting(v, profile_source) for k, v in profile.items()},
            **{k: Setting(s.value, where) for k, s in scenario.items()}}

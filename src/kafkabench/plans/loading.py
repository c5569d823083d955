"""Plans and profiles from YAML: a built-in name or a file, with errors that say where.

`plan.yaml: scenarios -> 2 (produce) -> rate: must be a finite number > 0 (or -1: as fast as possible)`; scenarios are
counted from 1, as a reader counts them. Profiles are looked up next to the plan (`profiles/NAME.yaml`),
then among the built-in ones; a path works too.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from kafkabench.config.client_settings import build_settings
from kafkabench.config.properties import Setting
from kafkabench.errors import ConfigError
from kafkabench.labs import registry
from kafkabench.plans.model import Plan, PlanKeys, PlanScenario, Profile

BUILTIN = resources.files("kafkabench.plans")


class PlanError(ConfigError):
    """A plan or profile that cannot be used, located."""


@dataclass(frozen=True)
class LoadedPlan:
    plan: Plan
    scenarios: list[PlanScenario]
    source: str  # the file, or "built-in plan NAME"
    text: str
    profiles: dict[str, Profile]
    base: Path | None  # where relative paths in the plan start


def builtin_names(kind: str = "builtin") -> list[str]:
    return sorted(entry.name.removesuffix(".yaml") for entry in BUILTIN.joinpath(kind).iterdir() if entry.name.endswith(".yaml"))


def load_plan(spec: str) -> LoadedPlan:
    """`spec` is a YAML file or the name of a built-in plan."""
    path = Path(spec)
    if path.is_file():
        text, label, base = path.read_text(encoding="utf-8"), str(path), path.parent
    elif spec in builtin_names():
        text, label, base = BUILTIN.joinpath("builtin", f"{spec}.yaml").read_text(encoding="utf-8"), f"{spec}.yaml", None
    else:
        raise PlanError(f"{spec}: no such plan file, and no built-in plan of that name (built-in: {', '.join(builtin_names())})")
    plan, scenarios = parse_plan(text, label)
    names = dict.fromkeys([*plan.profiles, *(p for s in scenarios for p in s.keys.profiles or [])])
    profiles = {name: load_profile(name, base) for name in names}
    return LoadedPlan(plan, scenarios, label if base is not None else f"built-in plan {spec}", text, profiles, base)


def parse_plan(text: str, label: str) -> tuple[Plan, list[PlanScenario]]:
    data = _yaml(text, label)
    plan = _validated(Plan, data, label)
    return plan, [_scenario(raw, index, data, label) for index, raw in enumerate(plan.scenarios)]


def _scenario(raw: dict, index: int, data: dict, label: str) -> PlanScenario:
    """One scenario, validated by its lab's own model; errors located in the whole plan."""
    where = ("scenarios", index)
    keys = _validated(PlanKeys, raw, label, where, data)
    lab_name = raw.get("lab")
    if not isinstance(lab_name, str):
        raise PlanError(f"{label}: {location(where, data)}: needs `lab:` ({', '.join(registry.names())})")
    if lab_name not in registry.names():
        known = ", ".join(repr(name) for name in registry.names())
        raise PlanError(f"{label}: {location(where, data)}: unknown lab {lab_name!r}; expected one of {known}")
    model = registry.get(lab_name).scenario
    if "client" in raw and not model.clients_together:
        raise PlanError(f"{label}: {location((*where, 'client'), data)}: a plan names its clients with `clients: [...]`")
    plan_only = {"name", "profiles", "own_cluster", "kafka_version", "brokers"} | (
        set() if model.clients_together else {"clients"})
    given = {key: value for key, value in raw.items() if key not in plan_only}
    return PlanScenario(keys, _validated(model, given, label, where, data), frozenset(given))


def load_profile(name: str, base: Path | None) -> Profile:
    for candidate, label in _profile_candidates(name, base):
        if candidate.is_file():
            return check_profile(_validated(Profile, _yaml(candidate.read_text(encoding="utf-8"), label), label), label)
    raise PlanError(f"profile {name!r}: not found next to the plan (profiles/{name}.yaml) nor built in "
                    f"(built-in: {', '.join(builtin_names('profiles'))})")


def check_profile(profile: Profile, label: str) -> Profile:
    """Every key a Kafka setting of its role (the closest names suggested otherwise)."""
    try:
        build_settings(defaults={}, **{slot: {k: Setting(v, f"{label}: {role}") for k, v in profile.role(role).items()}
                                       for slot, role in (("producer_file", "producer"), ("consumer_file", "consumer"), ("topic", "topic"))})
    except ConfigError as exc:
        raise PlanError(str(exc)) from None
    return profile


def _profile_candidates(name: str, base: Path | None) -> list[tuple[Any, str]]:
    if name.endswith((".yaml", ".yml")) or "/" in name:
        path = Path(name) if base is None or Path(name).is_absolute() else base / name
        return [(path, str(path))]
    local = [(base / "profiles" / f"{name}.yaml", str(base / "profiles" / f"{name}.yaml"))] if base is not None else []
    return [*local, (BUILTIN.joinpath("profiles", f"{name}.yaml"), f"built-in profile {name}")]


def _yaml(text: str, label: str) -> Any:
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise PlanError(f"{label}: {where}not valid YAML: {problem}") from None
    return {} if data is None else data


def _validated(model: type, data: Any, label: str, where: tuple = (), whole: Any = None):
    """`data` validated by `model`; an error says where, `where` being the path of `data` inside `whole`."""
    if not isinstance(data, dict):
        raise PlanError(f"{label}: expected a mapping of keys (name:, scenarios:, ...), found {type(data).__name__}")
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        errors = exc.errors()
        more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
        first = {**errors[0], "loc": (*where, *errors[0]["loc"])}
        raise PlanError(f"{label}: {describe(first, data if whole is None else whole)}{more}") from None


def describe(error: dict, data: Any) -> str:
    """`scenarios -> 2 (produce) -> rate: must be > 0`: pydantic's location, readable."""
    where = location(error["loc"], data)
    return f"{where}: {explain(error)}" if where else explain(error)


def location(loc: tuple, data: Any) -> str:
    """`scenarios -> 2 (produce) -> rate`: a path into the data, scenarios counted from 1 and named."""
    parts, node = [], data
    for key in loc:
        if isinstance(key, int) and isinstance(node, list):
            item = node[key] if key < len(node) else None
            label = (item.get("name") or item.get("lab")) if isinstance(item, dict) else None
            parts.append(f"{key + 1}" + (f" ({label})" if isinstance(label, str) else ""))
        else:
            parts.append(str(key))
        node = node[key] if isinstance(node, (dict, list)) and _has(node, key) else None
    return " -> ".join(parts)


def _has(node: Any, key: Any) -> bool:
    return key in node if isinstance(node, dict) else isinstance(key, int) and key < len(node)


def explain(error: dict) -> str:
    kind, ctx = error["type"], error.get("ctx", {})
    simple = {
        "missing": "required",
        "extra_forbidden": "not a known key here",
        "greater_than": f"must be > {ctx.get('gt')}",
        "greater_than_equal": f"must be >= {ctx.get('ge')}",
        "less_than_equal": f"must be <= {ctx.get('le')}",
        "int_parsing": "must be a whole number",
        "int_from_float": "must be a whole number",
        "float_parsing": "must be a number",
        "list_type": "must be a list",
        "dict_type": "must be a mapping",
        "string_type": "must be text",
        "too_short": "must not be empty",
        "string_pattern_mismatch": "letters, digits, '.', '_' and '-' only",
    }
    if kind in simple:
        return simple[kind]
    if kind == "literal_error":
        return f"must be one of {ctx.get('expected')}"
    if kind == "value_error":
        return str(ctx.get("error", error["msg"]))
    return error["msg"][0].lower() + error["msg"][1:]

"""What `kafkabench tune` may change, as data: a YAML file per client (`spaces/CLIENT.yaml`, or `--space FILE`).

Each entry under `producer`, `consumer` or `topic` is one dimension of the search:

    linger.ms: {low: 0.1, high: 100, log: true}     # a range; int when both ends are ints; log: sampled on a log scale
    acks: {choices: ["1", all]}                       # values of the setting itself
    compression:                                      # several settings chosen together, by label
      choices:
        none: {compression.type: none}
        zstd-3: {compression.type: zstd, librdkafka:compression.level: 3}

On a cluster kafkabench runs, the brokers are a variable too: `broker` holds broker settings (server.properties
names), `jvm` the brokers' JVM options as a prefix and its values, `default` for none:

    broker:
      num.io.threads: {choices: [2, 8]}
    jvm:
      -XX:G1HeapRegionSize=: {choices: [default, 4m]}

Every setting name (and every end of a range, every choice) is checked against the client's own vocabulary, as
`-X` is, when the space is loaded, and a broker setting or JVM option against the broker's and the JVM's: a space
that names something they do not have is refused, before any trial runs.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from importlib import resources
from pathlib import Path
from typing import Any

import yaml

from kafkabench.cluster.artifacts import packaged_manifest
from kafkabench.cluster.variant import BrokerVariant
from kafkabench.config.client_settings import SIZE_LIMITS, build_settings
from kafkabench.config.properties import Setting
from kafkabench.errors import ConfigError

CLIENT_ROLES = ("producer", "consumer", "topic")
BROKER_ROLES = ("broker", "jvm")  # a trial with other values than the brokers' own runs on a cluster of its own
ROLES = CLIENT_ROLES + BROKER_ROLES
JVM_DEFAULT = "default"  # a jvm dimension's value that gives no option: the JVM's own choice
SETTINGS_ARGUMENT = {"producer": "producer_file", "consumer": "consumer_file", "topic": "topic"}  # build_settings' names
BUILTIN = resources.files("kafkabench.labs.tune").joinpath("spaces")


@dataclass(frozen=True)
class Dimension:
    """One axis of the search: a range of one setting, or a choice among labelled bundles of settings."""

    role: str
    name: str  # the setting, or the label of a bundle choice ("compression")
    low: float | None = None
    high: float | None = None
    log: bool = False
    integer: bool = False
    choices: tuple[tuple[str, dict[str, str]], ...] = ()  # (label, settings) in the file's order

    @property
    def key(self) -> str:
        """The parameter's name in the study."""
        return f"{self.role}.{self.name}"

    @property
    def settings_names(self) -> frozenset[str]:
        return frozenset(k for _, bundle in self.choices for k in bundle) if self.choices else frozenset({self.name})

    def distribution(self):
        from optuna.distributions import CategoricalDistribution, FloatDistribution, IntDistribution

        if self.choices:
            return CategoricalDistribution([label for label, _ in self.choices])
        if self.integer:
            return IntDistribution(int(self.low), int(self.high), log=self.log)
        return FloatDistribution(self.low, self.high, log=self.log)

    def settings(self, value: Any) -> dict[str, str]:
        """What this dimension sets for a value of its parameter."""
        if self.choices:
            return dict(self.choices)[value]
        return {self.name: _text(int(value) if self.integer else round(float(value), 3))}


@dataclass(frozen=True)
class SearchSpace:
    client: str
    source: str
    dimensions: tuple[Dimension, ...]

    def distributions(self) -> dict[str, Any]:
        return {d.key: d.distribution() for d in self.dimensions}

    def settings(self, params: dict[str, Any]) -> dict[str, dict[str, str]]:
        """A trial's parameters as settings per role (a dimension the trial has no value for is left out)."""
        out: dict[str, dict[str, str]] = {role: {} for role in ROLES}
        for d in self.dimensions:
            if d.key in params:
                out[d.role].update(d.settings(params[d.key]))
        return out

    def params_of(self, settings: dict[str, dict[str, str]]) -> dict[str, Any]:
        """The parameters that give these settings (a preset, the client's defaults), for the dimensions they
        fully decide; a range clipped into its ends, a bundle only when every one of its settings matches."""
        params: dict[str, Any] = {}
        for d in self.dimensions:
            given = settings.get(d.role, {})
            if d.choices:
                label = next((label for label, bundle in d.choices
                              if all(given.get(k) == v for k, v in bundle.items())), None)
                if label is not None:
                    params[d.key] = label
            elif d.name in given:
                try:
                    value = float(given[d.name])
                except ValueError:
                    continue
                value = min(max(value, d.low), d.high)
                params[d.key] = int(round(value)) if d.integer else value
        return params

    def fitted(self, needed: int) -> tuple[SearchSpace, list[str]]:
        """The size limits on a value's path (max.request.size, max.partition.fetch.bytes, ...) raised so every value
        the space offers carries a `needed`-byte record: a range's low end raised, or its dimension dropped when even
        its high end cannot; what changed, in words. (A trial below it would only be refused.)"""
        dimensions, notes = [], []
        for d in self.dimensions:
            if (d.role, d.name) not in SIZE_LIMITS or d.choices or d.low >= needed:
                dimensions.append(d)
            elif d.high < needed:
                notes.append(f"{d.key} left out: its highest value {d.high:,.0f} cannot carry a {needed:,}-byte record")
            else:
                dimensions.append(replace(d, low=float(needed)))
                notes.append(f"{d.key} from {needed:,} (was {d.low:,.0f}): a {needed:,}-byte record must fit")
        return replace(self, dimensions=tuple(dimensions)), notes

    @property
    def reaches_brokers(self) -> bool:
        return any(d.role in BROKER_ROLES for d in self.dimensions)

    def without(self, kept: dict[str, str]) -> SearchSpace:
        """The space minus every dimension that would change a kept setting (`--keep acks=all,...`)."""
        return replace(self, dimensions=tuple(d for d in self.dimensions if not d.settings_names & set(kept)))


def builtin_space_path(client: str) -> Path:
    path = Path(str(BUILTIN.joinpath(f"{client}.yaml")))
    if not path.is_file():
        shipped = sorted(p.stem for p in Path(str(BUILTIN)).glob("*.yaml"))
        raise ConfigError(f"no search space ships for --client {client} (shipped: {', '.join(shipped)}); "
                          f"write one and pass it with --space FILE")
    return path


def load_space(client: str, path: Path | None = None) -> SearchSpace:
    path = path or builtin_space_path(client)
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"search space {path} does not exist") from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"search space {path} is not YAML: {exc}") from None
    return parse_space(client, data, str(path))


def parse_space(client: str, data: Any, source: str) -> SearchSpace:
    if not isinstance(data, dict):
        raise ConfigError(f"{source}: a search space maps producer, consumer and topic to their settings")
    unknown = set(data) - set(ROLES) - {"description"}
    if unknown:
        raise ConfigError(f"{source}: {', '.join(sorted(unknown))}: a search space has {', '.join(ROLES)} "
                          f"(and a description)")
    dimensions = []
    for role in ROLES:
        entries = data.get(role) or {}
        if not isinstance(entries, dict):
            raise ConfigError(f"{source}: {role}: give its settings as NAME: {{low, high}} or NAME: {{choices}}")
        for name, spec in entries.items():
            where = f"{source}: {role} {name}"
            dimension = _dimension(role, str(name), spec, where)
            _check_vocabulary(dimension, where)
            dimensions.append(dimension)
    if not dimensions:
        raise ConfigError(f"{source}: the search space has no settings to change")
    return SearchSpace(client, source, tuple(dimensions))


def _dimension(role: str, name: str, spec: Any, where: str) -> Dimension:
    if not isinstance(spec, dict) or not ({"low", "high"} <= set(spec) or "choices" in spec):
        raise ConfigError(f"{where}: give {{low: L, high: H}} (and log: true) or {{choices: [...]}}")
    extra = set(spec) - {"low", "high", "log", "choices"}
    if extra:
        raise ConfigError(f"{where}: {', '.join(sorted(extra))} is not low, high, log or choices")
    if "choices" in spec:
        return Dimension(role, name, choices=_choices(name, spec["choices"], where))
    low, high, log = spec["low"], spec["high"], bool(spec.get("log", False))
    if isinstance(low, bool) or isinstance(high, bool) or not all(isinstance(v, (int, float)) for v in (low, high)):
        raise ConfigError(f"{where}: low and high must be numbers")
    if not low < high:
        raise ConfigError(f"{where}: low {low} must be below high {high}")
    if log and low <= 0:
        raise ConfigError(f"{where}: a log scale needs low > 0 (it is {low})")
    integer = isinstance(low, int) and isinstance(high, int)
    return Dimension(role, name, float(low), float(high), log, integer)


def _choices(name: str, choices: Any, where: str) -> tuple[tuple[str, dict[str, str]], ...]:
    if isinstance(choices, list) and choices:
        return tuple((_text(value), {name: _text(value)}) for value in choices)
    if isinstance(choices, dict) and choices and all(isinstance(b, dict) and b for b in choices.values()):
        return tuple((str(label), {str(k): _text(v) for k, v in bundle.items()}) for label, bundle in choices.items())
    raise ConfigError(f"{where}: choices are a list of values, or labels mapped to the settings each one sets")


def _check_vocabulary(dimension: Dimension, where: str) -> None:
    """Each setting and each value it can take, asked of the client's vocabulary the way -X is."""
    if dimension.choices:
        candidates = [bundle for _, bundle in dimension.choices]
    else:
        candidates = [dimension.settings(dimension.low), dimension.settings(dimension.high)]
    for bundle in candidates:
        if dimension.role in BROKER_ROLES:
            variant_of({dimension.role: bundle}).check(where=where)
            continue
        given = {key: Setting(value, where) for key, value in bundle.items()}
        build_settings(defaults={}, **{SETTINGS_ARGUMENT[dimension.role]: given})


def variant_of(settings: dict[str, dict[str, str]]) -> BrokerVariant:
    """The brokers a trial's settings ask for; a broker setting at Kafka's default, a JVM option at `default`, are the
    brokers' own (so the default trial runs on the cluster as it is)."""
    defaults = packaged_manifest().broker_settings
    broker = {k: v for k, v in settings.get("broker", {}).items() if defaults.get(k) != v}
    jvm = [f"{prefix}{value}" for prefix, value in settings.get("jvm", {}).items() if value != JVM_DEFAULT]
    return BrokerVariant.of(None, broker, jvm)


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)

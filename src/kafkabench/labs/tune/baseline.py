"""What a tune starts from: the settings --keep holds, the default it must beat (the client's defaults under the
user's own settings) and the well-known presets it tries first; all as settings by role (trial.py's `Settings`)."""

from __future__ import annotations

from kafkabench.client_defaults import default_of
from kafkabench.config.client_settings import RECORD_OVERHEAD, SIZE_LIMITS
from kafkabench.errors import ConfigError
from kafkabench.labs.throughput.plan import load_payloads
from kafkabench.labs.tune.scenario import TuneScenario
from kafkabench.cluster.artifacts import packaged_manifest
from kafkabench.labs.tune.space import BROKER_ROLES, CLIENT_ROLES, JVM_DEFAULT, ROLES, SearchSpace
from kafkabench.labs.tune.trial import SETTINGS_FIELD, Settings, trial_scenario

PRESETS = ("latency", "throughput")  # the project's profiles, tried first
KNOB_FIELDS = {"acks": ("producer", "acks"), "compression": ("producer", "compression.type")}


def kept_settings(scenario: TuneScenario) -> Settings:
    """--keep's settings by the roles that have each name (a client's before the topic's: compression.type is
    the producer's), and --acks / --compression when given."""
    from kafkabench.config import java_names, native

    kept: Settings = {role: {} for role in ROLES}
    for name, value in scenario.kept.items():
        form, own = native.split(name)
        if form is not None:
            roles = [role for role in ("producer", "consumer") if role in form.roles(own)]
        else:
            roles = [role for role in ("producer", "consumer") if name in java_names.names(role)] or \
                    [role for role in ("topic",) if name in java_names.names(role)]
        if not roles:
            vocabulary = frozenset().union(*(java_names.names(role) for role in CLIENT_ROLES))
            hint = java_names.closest(name, vocabulary)
            raise ConfigError(f"--keep {name}: not a producer, consumer or topic setting"
                              + (f"; did you mean {', '.join(hint)}?" if hint else ""))
        for role in roles:
            kept[role][name] = value
    for field, (role, name) in KNOB_FIELDS.items():
        if getattr(scenario, field) is not None:
            kept[role][name] = getattr(scenario, field)
    return kept


def needed_bytes(scenario: TuneScenario) -> int:
    """What the size limits must carry: the largest value and its record's framing, as fit_payload counts it."""
    return max(len(p) for p in load_payloads(trial_scenario(scenario, {}, "size"))) + RECORD_OVERHEAD


def default_settings(scenario: TuneScenario, space: SearchSpace) -> Settings:
    """The client's defaults for every setting of the space, the size limits as kafkabench raises them for the
    payload (fit_payload), under the user's own settings."""
    defaults: Settings = {role: {} for role in ROLES}
    needed = needed_bytes(scenario)
    for d in space.dimensions:
        for name in d.settings_names:
            value = _brokers_own(d.role, name) if d.role in BROKER_ROLES else default_of(scenario.client, d.role, name)
            if value is not None and (d.role, name) in SIZE_LIMITS:
                value = str(max(int(value), needed))
            if value is not None:
                defaults[d.role][name] = value
    produce = trial_scenario(scenario, {}, "user")
    user = {role: {k: s.value for k, s in (getattr(produce, field) or {}).items()}
            for role, field in SETTINGS_FIELD.items()}
    return merged(defaults, user)


def _brokers_own(role: str, name: str) -> str | None:
    """A broker setting's default as Kafka has it; a JVM option's: none (the JVM's own choice)."""
    return packaged_manifest().broker_settings.get(name) or None if role == "broker" else JVM_DEFAULT


def preset(name: str, space: SearchSpace) -> Settings:
    """A profile's settings that the space tunes (the latency profile's acks=1 is not: durability stays)."""
    from kafkabench.plans.loading import load_profile

    profile = load_profile(name, None)
    tuned = {(d.role, setting) for d in space.dimensions for setting in d.settings_names}
    return {role: {k: v for k, v in profile.role(role).items() if (role, k) in tuned} for role in CLIENT_ROLES}


def merged(*layers: Settings) -> Settings:
    """The layers' settings, a later layer's value over an earlier one's."""
    result: Settings = {role: {} for role in ROLES}
    for layer in layers:
        for role in ROLES:
            result[role].update(layer.get(role, {}))
    return result

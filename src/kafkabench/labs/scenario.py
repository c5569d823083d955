"""What every lab's scenario model shares: the model is at once the CLI's request and a plan's scenario, so
each parameter, its default, its constraints and its help are written once, here and in the lab's model.

Field metadata says how the CLI shows a field (`Cli`) and which client setting a field is the same knob as
(`Knob`), so a plan can refuse a scenario and a profile setting the same thing in two places.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, ClassVar, Literal

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field

from kafkabench.config.client_settings import ClientSettings, build_settings
from kafkabench.config.properties import Setting
from kafkabench.config.security import is_security_key
from kafkabench.labs.payload import check_value_size

if TYPE_CHECKING:
    from kafkabench.cluster.target import Target

SCENARIO_SOURCE = "scenario"  # where a setting came from when only the model knows (a plan re-sources it)


@dataclass(frozen=True)
class Cli:
    """How the CLI offers a field: its flags (default `--field-name`), a comma list or a repeated option,
    required on the command line, or not offered at all."""

    flags: tuple[str, ...] = ()
    repeat: bool = False  # a list given by repeating the option instead of a comma list
    required: bool = False
    offered: bool = True
    positional: bool = False  # an argument (`kafkabench tune latency`), not an option

    def __init__(self, *flags: str, repeat: bool = False, required: bool = False, offered: bool = True,
                 positional: bool = False) -> None:
        object.__setattr__(self, "flags", flags)
        object.__setattr__(self, "repeat", repeat)
        object.__setattr__(self, "required", required)
        object.__setattr__(self, "offered", offered)
        object.__setattr__(self, "positional", positional)


@dataclass(frozen=True)
class Knob:
    """The field sets this client setting: a plan may not also set it in a profile."""

    role: str
    key: str


def _acks(value: Any) -> Any:
    text = str(value).strip().lower() if isinstance(value, (str, int)) and not isinstance(value, bool) else value
    if text not in ("0", "1", "all", "-1"):
        raise ValueError("must be 0, 1, all or -1 (the same as all)")
    return "all" if text == "-1" else text


def _settings(value: Any) -> Any:
    """YAML values as a .properties file would say them (true -> "true"); a Setting keeps its source."""
    if not isinstance(value, dict):
        return value
    settings = {}
    for key, item in value.items():
        if isinstance(item, Setting):
            settings[str(key)] = item
        elif isinstance(item, (str, int, float, bool)):
            settings[str(key)] = Setting(setting_text(item), SCENARIO_SOURCE)
        else:
            raise ValueError(f"{key}: must be text, a number or true/false")
    return settings


def setting_text(value: str | int | float | bool) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _rate(rate: float) -> float:
    if rate != -1 and not (math.isfinite(rate) and rate > 0):
        raise ValueError("must be a finite number > 0 (or -1: as fast as possible)")
    return rate


Acks = Annotated[Literal["0", "1", "all"], BeforeValidator(_acks)]
Rate = Annotated[float, AfterValidator(_rate)]  # per second on an open-loop schedule; -1: as fast as possible
PositiveRate = Annotated[float, Field(gt=0, allow_inf_nan=False)]  # per second, a finite number
RecordSize = Annotated[int, Field(gt=0), AfterValidator(check_value_size)]  # bytes of one value, as Kafka can carry it
Codec = Literal["none", "gzip", "snappy", "lz4", "zstd"]
RoleSettings = Annotated[dict[str, Setting], BeforeValidator(_settings)]

# the client settings a scenario may carry, as the CLI takes them
ProducerSettings = Annotated[RoleSettings, Cli("--producer-config"),
                             Field(description="Java-style .properties file of producer settings.")]
ConsumerSettings = Annotated[RoleSettings, Cli("--consumer-config"),
                             Field(description="Java-style .properties file of consumer settings.")]
TopicSettings = Annotated[RoleSettings, Cli("--topic-config", repeat=True),
                          Field(description="Topic setting KEY=VALUE (repeatable).")]
Overrides = Annotated[RoleSettings, Cli("-X", repeat=True),
                      Field(description="Client setting KEY=VALUE in Java names, for the producer, the consumer or both "
                                        "(repeatable); librdkafka:NAME=VALUE for librdkafka's own settings (confluent "
                                        "client only).")]
SETTINGS_FIELDS = {"producer": "producer", "consumer": "consumer", "topic_config": "topic"}  # field -> role


class Scenario(BaseModel):
    """Base of every lab's scenario model. Subclasses declare `lab: Literal["name"] = "name"` and their
    parameters; `clients_together` says whether one run measures several clients side by side (field
    `clients`) or one (field `client`)."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True)

    lab: str
    clients_together: ClassVar[bool] = False
    # its command's help in panels: panel -> field names; the settings fields have a panel of their own, the rest
    # stay in the first ("Options")
    panels: ClassVar[dict[str, tuple[str, ...]]] = {}

    @property
    def takes_clients(self) -> bool:
        """A plan's clients apply: the lab measures one client (`client`) or several side by side (`clients`)."""
        return ("clients" if self.clients_together else "client") in type(self).model_fields

    def with_clients(self, clients: tuple[str, ...]) -> Scenario:
        if not self.takes_clients:
            return self
        if self.clients_together:
            return self.model_copy(update={"clients": list(clients)})
        return self.model_copy(update={"client": clients[0]})

    def rebased(self, base: Path) -> Scenario:
        """Relative paths (a payload file) read from `base`, the plan's directory."""
        update = {}
        for name in type(self).model_fields:
            value = getattr(self, name)
            if isinstance(value, Path) and not value.is_absolute():
                update[name] = base / value
            elif isinstance(value, list) and value and all(isinstance(v, Path) for v in value):
                update[name] = [v if v.is_absolute() else base / v for v in value]
        return self.model_copy(update=update)

    def security_settings(self) -> dict[str, str]:
        """The security settings (Java names) the scenario's producer, consumer and -X settings give: how kafkabench's
        own calls get into the cluster the user named."""
        given = [getattr(self, name, None) or {} for name in ("producer", "consumer", "overrides")]
        return {key: setting.value for settings in given for key, setting in settings.items() if is_security_key(key)}

    def against(self, target: Target) -> tuple[Target, Scenario]:
        """The target this scenario runs against (the listener its security settings ask for), and the scenario with
        that listener's security settings under its own (`connected`)."""
        own = self.security_settings()
        listener = target.listener_for(own)
        return listener.with_settings(own), self.connected(dict(listener.security), listener.security_source)

    def connected(self, security: dict[str, str], source: str) -> Scenario:
        """With the cluster's security settings under the scenario's own producer and consumer settings, so a lab's
        clients get in as kafkabench's own calls do (a secured embedded cluster's client.properties, say)."""
        if not security:
            return self
        cluster = {key: Setting(value, source) for key, value in security.items()}
        update = {name: {**cluster, **(getattr(self, name) or {})}
                  for name in ("producer", "consumer") if name in type(self).model_fields}
        return self.model_copy(update=update) if update else self

    def settings(self, defaults: dict[str, dict[str, str]]) -> ClientSettings:
        """The lab's defaults, then the scenario's settings by role, then its overrides; every key checked."""
        given = {role: getattr(self, name, None) or {} for name, role in SETTINGS_FIELDS.items()}
        return build_settings(defaults=defaults, producer_file=given["producer"], consumer_file=given["consumer"],
                              topic=given["topic"], overrides=getattr(self, "overrides", None) or {})


def field_metadata(model: type[BaseModel], name: str, kind: type) -> Any:
    """The `Cli` or `Knob` metadata of a field, if it has one."""
    found = [m for m in model.model_fields[name].metadata if isinstance(m, kind)]
    return found[-1] if found else None  # the outermost annotation wins


def settings_roles(model: type[BaseModel]) -> dict[str, str]:
    """role -> field for the client settings this lab's scenario takes."""
    return {role: name for name, role in SETTINGS_FIELDS.items() if name in model.model_fields}

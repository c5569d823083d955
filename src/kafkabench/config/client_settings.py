"""One lab's producer, consumer and topic settings in Java names: kafkabench's defaults, then the user's
files, then `-X`; every key checked against the Java client's vocabulary (a `librdkafka:NAME` key against
librdkafka's, see `native`), every size limit fitted to the payload."""

from __future__ import annotations

from dataclasses import dataclass, field

from kafkabench.config import java_names, native
from kafkabench.config.native import NativeForm
from kafkabench.config.properties import Setting
from kafkabench.config.redact import scrubbed, shown
from kafkabench.errors import ConfigError

# bytes a record batch adds around one value (batch header 61, record framing, key, headers), rounded up
RECORD_OVERHEAD = 1024

# the limits on the path of one large value: (role, setting)
SIZE_LIMITS = (
    ("producer", "max.request.size"),
    ("consumer", "max.partition.fetch.bytes"),
    ("consumer", "fetch.max.bytes"),
    ("topic", "max.message.bytes"),
)


@dataclass
class ClientSettings:
    producer: dict[str, Setting] = field(default_factory=dict)
    consumer: dict[str, Setting] = field(default_factory=dict)
    topic: dict[str, Setting] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)  # what kafkabench set, to print

    def role(self, role: str) -> dict[str, Setting]:
        return {"producer": self.producer, "consumer": self.consumer, "topic": self.topic}[role]

    def values(self, role: str) -> dict[str, str]:
        return {key: setting.value for key, setting in self.role(role).items()}


def build_settings(
    *,
    defaults: dict[str, dict[str, str]],
    producer_file: dict[str, Setting] | None = None,
    consumer_file: dict[str, Setting] | None = None,
    topic: dict[str, Setting] | None = None,
    overrides: dict[str, Setting] | None = None,
) -> ClientSettings:
    """Layer the settings and check every key; `overrides` (-X) go to the producer, the consumer or both by name."""
    settings = ClientSettings()
    for role in ("producer", "consumer", "topic"):
        settings.role(role).update({k: Setting(v, "kafkabench") for k, v in defaults.get(role, {}).items()})
    for role, given in (("producer", producer_file), ("consumer", consumer_file), ("topic", topic)):
        for key, setting in (given or {}).items():
            _check_known(key, setting, (role,))
            settings.role(role)[key] = setting
    for key, setting in (overrides or {}).items():
        roles = _check_known(key, setting, ("producer", "consumer"))
        for role in roles:
            settings.role(role)[key] = setting
    for role in ("producer", "consumer"):
        settings.role(role).pop("bootstrap.servers", None)  # the target decides; see bootstrap_from()
    return settings


def bootstrap_from(producer_file: dict[str, Setting] | None, consumer_file: dict[str, Setting] | None) -> str | None:
    for given in (producer_file, consumer_file):
        if given and "bootstrap.servers" in given:
            return given["bootstrap.servers"].value
    return None


def _check_known(key: str, setting: Setting, roles: tuple[str, ...]) -> tuple[str, ...]:
    """The roles the key applies to among `roles`; a ConfigError naming where it came from otherwise."""
    form, name = native.split(key)
    if form is not None:
        return _check_native(form, name, key, setting, roles)
    matching = tuple(role for role in roles if key in java_names.names(role))
    if matching:
        return matching
    vocabulary = frozenset().union(*(java_names.names(role) for role in roles))
    hint = java_names.closest(key, vocabulary)
    what = " or ".join(roles)
    suggestion = f"; did you mean {', '.join(hint)}?" if hint else ""
    if native.SEPARATOR in key:
        suggestion += f"; a library's own names are written {native.prefixes_hint()}"
    raise ConfigError(f"{setting.source}: {key} is not a Kafka {what} setting{suggestion}")


def _check_native(form: NativeForm, name: str, key: str, setting: Setting, roles: tuple[str, ...]) -> tuple[str, ...]:
    """Asked of the library itself: the name, the value, and the roles it documents the name for."""
    if "topic" in roles:
        raise ConfigError(f"{setting.source}: {key}: {form.prefix} names are client settings; "
                          f"a topic setting takes its Kafka topic name")
    refusal = form.refusal(name, setting.value)
    if refusal is not None and refusal.unknown_name:
        hint = [form.key(close) for close in java_names.closest(name, form.names())]
        suggestion = f"; did you mean {', '.join(hint)}?" if hint else ""
        raise ConfigError(f"{setting.source}: {key} is not a {form.prefix} setting{suggestion}")
    if refusal is not None:
        value = setting.value
        raise ConfigError(f"{setting.source}: {key}={shown(key, value)}: {scrubbed(key, value, refusal.message)}")
    documented = form.roles(name)
    matching = tuple(role for role in roles if role in documented)
    if not matching:
        raise ConfigError(f"{setting.source}: {key} is not a {form.prefix} {' or '.join(roles)} setting "
                          f"({form.prefix} documents it for the {' and '.join(sorted(documented))} only)")
    return matching


def fit_payload(settings: ClientSettings, payload_bytes: int) -> None:
    """Raise every size limit on the path so one value fits; refuse a limit the user set too small, in Java's
    name or in a library's own (`librdkafka:message.max.bytes` is the same limit as `max.request.size`)."""
    needed = payload_bytes + RECORD_OVERHEAD
    for role, key in SIZE_LIMITS:
        for native_key, setting in _native_equivalents(settings.role(role), key):
            _refuse_if_too_small(native_key, setting, payload_bytes, needed)
        current = settings.role(role).get(key)
        if current is not None and current.explicit:
            _refuse_if_too_small(key, current, payload_bytes, needed)
            continue
        default = int(java_names.default(role, key) or 0)
        settings.role(role)[key] = Setting(str(max(default, needed)), "kafkabench")
        if needed > default:
            settings.notes.append(f"{role} {key}={needed} (default {default} cannot fit a {payload_bytes}-byte value)")


def _native_equivalents(given: dict[str, Setting], java_key: str) -> list[tuple[str, Setting]]:
    found = []
    for key, setting in given.items():
        form, name = native.split(key)
        if form is not None and form.same_as_java(name, java_key):
            found.append((key, setting))
    return found


def _refuse_if_too_small(key: str, setting: Setting, payload_bytes: int, needed: int) -> None:
    if _as_int(key, setting) < needed:
        raise ConfigError(
            f"{setting.source}: {key}={setting.value} cannot fit the {payload_bytes}-byte payload "
            f"(needs at least {needed} with record overhead); raise it or leave it to kafkabench"
        )


def _as_int(key: str, setting: Setting) -> int:
    try:
        return int(setting.value)
    except ValueError:
        raise ConfigError(f"{setting.source}: {key}={setting.value} is not a number of bytes") from None

"""Java setting names into each client's own, reading what each library accepts from the library itself.

A Java setting a client has no equivalent for is reported as not applicable (printed and recorded in the
result), never silently dropped. A value a client rejects is a ConfigError before anything is sent.

A key in a library's own form (`librdkafka:NAME`, see `native`) goes to the clients built on that library
with the prefix stripped, after the translated Java names, so it wins; every other client reports it as not
applicable.

Security settings (`security.protocol`, `sasl.*`, `ssl.*`) are not renamed one by one: one Java setting can
become several of a client's (the JAAS text holds librdkafka's `sasl.username` and `sasl.password`) or none
it can use (a JKS truststore). `security_clients` writes them in the client's form; they are merged before the
native names, so a `librdkafka:` name still wins.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass, field
from typing import Any, Callable

from kafkabench.config import java_names, librdkafka, native, security, security_clients
from kafkabench.config.java_names import Role
from kafkabench.config.librdkafka import LIBRDKAFKA_NAMES
from kafkabench.config.redact import scrub_text, scrubbed, secret_values, shown
from kafkabench.config.security_clients import SecurityTranslated
from kafkabench.errors import ConfigError


@dataclass(frozen=True)
class Translated:
    config: dict[str, Any]
    not_applicable: list[str] = field(default_factory=list)


# librdkafka's response buffer must exceed fetch.max.bytes by at least this much
LIBRDKAFKA_RECEIVE_MARGIN = 512
LIBRDKAFKA_RECEIVE_DEFAULT = 100_000_000

# where the asyncio client's keyword differs from Java's name in snake case
AIOKAFKA_NAMES = {"batch.size": "max_batch_size"}


def translate(client: str, role: Role, config: dict[str, str]) -> Translated:
    try:
        translator = TRANSLATORS[client]
    except KeyError:
        raise ConfigError(f"no config translation for client {client!r}; known: {', '.join(sorted(TRANSLATORS))}") from None
    java_config, own_names, not_taken = native.partition(client, config)
    plain = {key: value for key, value in java_config.items() if not security.is_security_key(key)}
    secured = security_clients.translate_security(client, java_config, own_names)
    translated = translator(role, plain, own_names, secured)
    return Translated(translated.config, translated.not_applicable + not_taken)


def _java(role: Role, config: dict[str, str], own_names: dict[str, str], secured: SecurityTranslated) -> Translated:
    return Translated({**config, **secured.config, **own_names})


def _librdkafka(role: Role, config: dict[str, str], own_names: dict[str, str], secured: SecurityTranslated) -> Translated:
    """Java names into librdkafka's, then the `librdkafka:` names as given. A native name wins over a Java
    name that comes to the same librdkafka property, aliases included (`librdkafka:queue.buffering.max.ms`
    over `linger.ms`): the Java one is left out, so the user's native value is the one librdkafka sees."""
    translated = {LIBRDKAFKA_NAMES.get(key, key): "0" if _os_default(key, value) else value
                  for key, value in config.items()}  # librdkafka's 0 is Java's -1
    back = {LIBRDKAFKA_NAMES.get(key, key): key for key in config}  # librdkafka's name -> the name the user gave
    translated.update(secured.config)
    back.update(secured.origins)
    if own_names:
        overridden = {librdkafka.canonical(name) for name in own_names}
        translated = {name: value for name, value in translated.items() if librdkafka.canonical(name) not in overridden}
    merged = {**translated, **own_names}
    back.update({name: native.LIBRDKAFKA.key(name) for name in own_names})
    fetch_max = int(merged.get("fetch.max.bytes", 0) or 0)
    if (role == "consumer" and fetch_max + LIBRDKAFKA_RECEIVE_MARGIN > LIBRDKAFKA_RECEIVE_DEFAULT
            and "receive.message.max.bytes" not in own_names):
        merged["receive.message.max.bytes"] = str(fetch_max + LIBRDKAFKA_RECEIVE_MARGIN)
        back["receive.message.max.bytes"] = back.get("fetch.max.bytes", "fetch.max.bytes")
    checked = _librdkafka_checked(role, merged, back)
    return Translated(checked.config, checked.not_applicable + secured.not_applicable)


def _librdkafka_checked(role: Role, merged: dict[str, str], back: dict[str, str]) -> Translated:
    """What a throwaway client refuses: a Java name librdkafka lacks is not applicable, anything else an error."""
    not_applicable = []
    while True:
        problem = _librdkafka_rejects(role, merged)
        if problem is None:
            return Translated(merged, not_applicable)
        key, message = problem
        key = _as_given(key, merged)
        if key is None:  # a file librdkafka could not load, say: no property named, so scrub by value
            raise ConfigError(f"confluent (librdkafka) rejects the {role} settings: {scrub_text(message, secret_values(merged))}")
        given = back.get(key, key)
        if "No such configuration property" in message and not native.is_native(given):
            merged.pop(key)
            not_applicable.append(given)
            continue
        value = merged[key]
        raise ConfigError(f"confluent (librdkafka) rejects {given}={shown(given, value)}: {scrubbed(given, value, message)}")


def _as_given(key: str | None, merged: dict[str, str]) -> str | None:
    """librdkafka names a property by its canonical name (`queue.buffering.max.ms` for `linger.ms`)."""
    if key is None or key in merged:
        return key
    return next((name for name in merged if librdkafka.canonical(name) == key), None)


def _librdkafka_rejects(role: Role, settings: dict[str, str]) -> tuple[str | None, str] | None:
    """Build a throwaway client (no bootstrap: it connects nowhere) and report what librdkafka refuses."""
    from confluent_kafka import Consumer, KafkaException, Producer

    from kafkabench.admin import quiet_client_config

    config = quiet_client_config("", **settings)
    config.pop("bootstrap.servers")
    if "sasl.mechanisms" in config and "sasl.username" not in config:
        # no login yet: a cluster kafkabench runs gives its own when the lab connects; librdkafka would refuse
        # the throwaway for lacking one, so it gets a stand-in (it connects nowhere)
        config.update({"sasl.username": "stand-in", "sasl.password": "stand-in"})
    try:
        if role == "producer":
            Producer(config).flush(0)
        else:
            Consumer({"group.id": "kafkabench-config-check", **config}).close()
    except (KafkaException, ValueError, TypeError) as exc:
        message = (exc.args[0].str() if isinstance(exc, KafkaException) else str(exc)).strip()
        quoted = message.split('"')
        return (quoted[1] if len(quoted) >= 3 else None), message
    return None


def _snake_case(
    role: Role, config: dict[str, str], accepted: frozenset[str], renames: dict[str, str]
) -> Translated:
    keywords: dict[str, Any] = {}
    not_applicable = []
    for key, value in config.items():
        name = renames.get(key, key.replace(".", "_"))
        if name not in accepted:
            not_applicable.append(key)
            continue
        keywords[name] = _typed(role, key, value)
    return Translated(keywords, not_applicable)


def _os_default(key: str, value: str) -> bool:
    """Java's -1 for a socket buffer: leave it to the OS (which tunes it as the connection goes)."""
    return key in ("send.buffer.bytes", "receive.buffer.bytes") and value.strip() == "-1"


def _typed(role: Role, key: str, value: str) -> Any:
    """Python clients want Python values: numbers, booleans, None for 'none'."""
    if key == "acks":
        return value if value == "all" else int(value)
    if key == "compression.type" and value == "none" or _os_default(key, value):
        return None
    kind = java_names.java_type(role, key)
    try:
        if kind in ("INT", "LONG", "SHORT"):
            return int(value)
        if kind == "DOUBLE":
            return float(value)
        if kind == "BOOLEAN":
            if value.lower() not in ("true", "false"):
                raise ValueError(value)
            return value.lower() == "true"
        if kind == "LIST":
            return [item.strip() for item in value.split(",") if item.strip()]
    except ValueError as exc:
        raise ConfigError(f"{key}={value}: not a valid {kind.lower()}") from exc
    return value


def _kafka_python(role: Role, config: dict[str, str], own_names: dict[str, str], secured: SecurityTranslated) -> Translated:
    from kafka import KafkaConsumer, KafkaProducer

    accepted = KafkaProducer.DEFAULT_CONFIG if role == "producer" else KafkaConsumer.DEFAULT_CONFIG
    return _with_own_names(_snake_case(role, config, frozenset(accepted), {}), secured, own_names)


def _aiokafka(role: Role, config: dict[str, str], own_names: dict[str, str], secured: SecurityTranslated) -> Translated:
    from aiokafka import AIOKafkaConsumer, AIOKafkaProducer

    cls = AIOKafkaProducer if role == "producer" else AIOKafkaConsumer
    accepted = frozenset(inspect.signature(cls.__init__).parameters) - {"self", "loop", "topics"}
    return _with_own_names(_snake_case(role, config, accepted, AIOKAFKA_NAMES), secured, own_names)


def _with_own_names(translated: Translated, secured: SecurityTranslated, own_names: dict[str, str]) -> Translated:
    """The security settings in the client's form, then a library's own names (none reach the Python clients
    until `native.FORMS` has a form for them), which win."""
    return Translated({**translated.config, **secured.config, **own_names},
                      translated.not_applicable + secured.not_applicable)


# role, the Java names but the security ones, the client's own names (prefix stripped: `native.partition`),
# the security settings in the client's form
Translator = Callable[[Role, dict[str, str], dict[str, str], SecurityTranslated], Translated]
TRANSLATORS: dict[str, Translator] = {
    "java": _java,
    "confluent": _librdkafka,
    "kafka-python": _kafka_python,
    "aiokafka": _aiokafka,
}

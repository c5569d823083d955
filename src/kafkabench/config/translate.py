"""Java setting names into each client's own, reading what each library accepts from the library itself.

A Java setting a client has no equivalent for is reported as not applicable (printed and recorded in the
result), never silently dropped. A value a client rejects is a ConfigError before anything is sent.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass, field
from typing import Any, Callable

from kafkabench.config import java_names
from kafkabench.config.java_names import Role
from kafkabench.errors import ConfigError


@dataclass(frozen=True)
class Translated:
    config: dict[str, Any]
    not_applicable: list[str] = field(default_factory=list)


# where librdkafka's name for the same setting differs from Java's
LIBRDKAFKA_NAMES = {
    "max.request.size": "message.max.bytes",
    "fetch.max.wait.ms": "fetch.wait.max.ms",
    "receive.buffer.bytes": "socket.receive.buffer.bytes",
    "send.buffer.bytes": "socket.send.buffer.bytes",
    # KIP-390's per-codec levels; librdkafka has one level for whichever codec is set
    "compression.gzip.level": "compression.level",
    "compression.lz4.level": "compression.level",
    "compression.zstd.level": "compression.level",
}
# librdkafka's response buffer must exceed fetch.max.bytes by at least this much
LIBRDKAFKA_RECEIVE_MARGIN = 512
LIBRDKAFKA_RECEIVE_DEFAULT = 100_000_000

# where the asyncio client's keyword differs from Java's name in snake case
AIOKAFKA_NAMES = {"batch.size": "max_batch_size"}


def translate(client: str, role: Role, java_config: dict[str, str]) -> Translated:
    try:
        translator = TRANSLATORS[client]
    except KeyError:
        raise ConfigError(f"no config translation for client {client!r}; known: {', '.join(sorted(TRANSLATORS))}") from None
    return translator(role, java_config)


def _java(role: Role, config: dict[str, str]) -> Translated:
    return Translated(dict(config))


def _librdkafka(role: Role, config: dict[str, str]) -> Translated:
    native = {LIBRDKAFKA_NAMES.get(key, key): value for key, value in config.items()}
    back = {LIBRDKAFKA_NAMES.get(key, key): key for key in config}
    fetch_max = int(native.get("fetch.max.bytes", 0) or 0)
    if role == "consumer" and fetch_max + LIBRDKAFKA_RECEIVE_MARGIN > LIBRDKAFKA_RECEIVE_DEFAULT:
        native["receive.message.max.bytes"] = str(fetch_max + LIBRDKAFKA_RECEIVE_MARGIN)
        back["receive.message.max.bytes"] = "fetch.max.bytes"
    not_applicable = []
    while True:
        problem = _librdkafka_rejects(role, native)
        if problem is None:
            return Translated(native, not_applicable)
        key, message = problem
        if key is None or key not in native:
            raise ConfigError(f"confluent (librdkafka) rejects the {role} settings: {message}")
        if "No such configuration property" in message:
            native.pop(key)
            not_applicable.append(back[key])
            continue
        raise ConfigError(f"confluent (librdkafka) rejects {back[key]}={native[key]}: {message}")


def _librdkafka_rejects(role: Role, native: dict[str, str]) -> tuple[str | None, str] | None:
    """Build a throwaway client (no bootstrap: it connects nowhere) and report what librdkafka refuses."""
    from confluent_kafka import Consumer, KafkaException, Producer

    from kafkabench.admin import quiet_client_config

    config = quiet_client_config("", **native)
    config.pop("bootstrap.servers")
    try:
        if role == "producer":
            Producer(config).flush(0)
        else:
            Consumer({"group.id": "kafkabench-config-check", **config}).close()
    except (KafkaException, ValueError, TypeError) as exc:
        message = exc.args[0].str() if isinstance(exc, KafkaException) else str(exc)
        quoted = message.split('"')
        return (quoted[1] if len(quoted) >= 3 else None), message
    return None


def _snake_case(
    role: Role, config: dict[str, str], accepted: frozenset[str], renames: dict[str, str]
) -> Translated:
    native: dict[str, Any] = {}
    not_applicable = []
    for key, value in config.items():
        name = renames.get(key, key.replace(".", "_"))
        if name not in accepted:
            not_applicable.append(key)
            continue
        native[name] = _typed(role, key, value)
    return Translated(native, not_applicable)


def _typed(role: Role, key: str, value: str) -> Any:
    """Python clients want Python values: numbers, booleans, None for 'none'."""
    if key == "acks":
        return value if value == "all" else int(value)
    if key == "compression.type" and value == "none":
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


def _kafka_python(role: Role, config: dict[str, str]) -> Translated:
    from kafka import KafkaConsumer, KafkaProducer

    accepted = KafkaProducer.DEFAULT_CONFIG if role == "producer" else KafkaConsumer.DEFAULT_CONFIG
    return _snake_case(role, config, frozenset(accepted), {})


def _aiokafka(role: Role, config: dict[str, str]) -> Translated:
    from aiokafka import AIOKafkaConsumer, AIOKafkaProducer

    cls = AIOKafkaProducer if role == "producer" else AIOKafkaConsumer
    accepted = frozenset(inspect.signature(cls.__init__).parameters) - {"self", "loop", "topics"}
    return _snake_case(role, config, accepted, AIOKAFKA_NAMES)


TRANSLATORS: dict[str, Callable[[Role, dict[str, str]], Translated]] = {
    "java": _java,
    "confluent": _librdkafka,
    "kafka-python": _kafka_python,
    "aiokafka": _aiokafka,
}

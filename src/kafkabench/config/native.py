"""Settings in a client library's own names, `PREFIX:NAME`, for what the Java vocabulary cannot reach:
librdkafka's `queued.min.messages`, `fetch.queue.backoff.ms`, `queue.buffering.max.messages` decide speed
and have no Java name. `-X librdkafka:fetch.queue.backoff.ms=0`, and the same key in a config file or a plan.

A native name is checked against its library's own vocabulary, as a Java name is against Java's, and reaches
the clients built on that library as it is (prefix stripped); for every other client it is not applicable
(printed and recorded), never dropped silently. `FORMS` is the one place a prefix is defined: a
`kafka-python:` form would be one more `NativeForm` here, with its vocabulary and the clients that take it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from kafkabench.config import librdkafka
from kafkabench.config.librdkafka import Refusal

SEPARATOR = ":"


@dataclass(frozen=True)
class NativeForm:
    prefix: str  # what comes before the colon
    clients: frozenset[str]  # the kafkabench clients that take these names as they are
    names: Callable[[], frozenset[str]]  # the library's vocabulary, for did-you-mean
    roles: Callable[[str], frozenset[str]]  # producer, consumer or both: where the library says a name applies
    refusal: Callable[[str, str], Refusal | None]  # what the library says of name=value (None: accepted)
    same_as_java: Callable[[str, str], bool]  # the name sets what this Java name sets (the size limits)

    def key(self, name: str) -> str:
        return f"{self.prefix}{SEPARATOR}{name}"


def _librdkafka_refusal(name: str, value: str) -> Refusal | None:
    """The brokers are the target's to choose: a native bootstrap list would quietly override it."""
    if librdkafka.canonical(name) == "metadata.broker.list":
        return Refusal(False, "the cluster is chosen with --bootstrap-servers (or bootstrap.servers in a config file)")
    return librdkafka.refusal(name, value)


def _librdkafka_same_as_java(name: str, java_name: str) -> bool:
    java_as_librdkafka = librdkafka.LIBRDKAFKA_NAMES.get(java_name, java_name)
    return librdkafka.canonical(name) == librdkafka.canonical(java_as_librdkafka)


LIBRDKAFKA = NativeForm(
    prefix="librdkafka",
    clients=frozenset({"confluent"}),
    names=lambda: frozenset(librdkafka.properties()),
    roles=librdkafka.roles,
    refusal=_librdkafka_refusal,
    same_as_java=_librdkafka_same_as_java,
)

FORMS: dict[str, NativeForm] = {form.prefix: form for form in (LIBRDKAFKA,)}


def split(key: str) -> tuple[NativeForm | None, str]:
    """(its form, the library's name) for a native key; (None, key) for a Java name."""
    prefix, separator, name = key.partition(SEPARATOR)
    form = FORMS.get(prefix) if separator else None
    return (form, name) if form is not None else (None, key)


def is_native(key: str) -> bool:
    return split(key)[0] is not None


def partition(client: str, config: dict[str, str]) -> tuple[dict[str, str], dict[str, str], list[str]]:
    """The Java names; the native names this client takes, prefix stripped; the native keys it does not take."""
    java, taken, not_taken = {}, {}, []
    for key, value in config.items():
        form, name = split(key)
        if form is None:
            java[key] = value
        elif client in form.clients:
            taken[name] = value
        else:
            not_taken.append(key)
    return java, taken, not_taken


def prefixes_hint() -> str:
    return ", ".join(f"{prefix}{SEPARATOR}NAME" for prefix in FORMS)

"""The interface every Kafka client library is put behind. Library errors become AdapterError here."""

from __future__ import annotations

from typing import Any, Callable, Protocol

AckCallback = Callable[[str | None], None]  # None on success, else the error text


class AdapterError(Exception):
    """A client library call failed; the message is one line."""


class KafkaClient(Protocol):
    name: str

    def version(self) -> str: ...

    def open(self, bootstrap_servers: str, producer_config: dict[str, Any], consumer_config: dict[str, Any]) -> None: ...

    def send(self, topic: str, key: bytes, value: bytes, on_ack: AckCallback) -> None:
        """Hand one record to the producer; `on_ack` is called once, when the broker's answer is in."""

    def flush(self, timeout_s: float) -> int:
        """Wait for outstanding acks (serving callbacks); return how many are still outstanding."""

    def assign_at_end(self, topic: str, partition: int, timeout_s: float) -> None:
        """Read `partition` from its current end offset, looked up explicitly so no record is missed."""

    def poll_record(self, timeout_s: float) -> tuple[bytes | None, bytes | None] | None:
        """The next record's (key, value), or None if none arrived within the timeout."""

    def effective_config(self) -> dict[str, dict[str, Any]]: ...

    def close(self) -> None: ...


def printable(config: dict[str, Any]) -> dict[str, Any]:
    """Config values as JSON can hold them (libraries keep objects such as SSL contexts in there)."""
    return {k: v if isinstance(v, (str, int, float, bool, type(None))) else str(v) for k, v in sorted(config.items())}

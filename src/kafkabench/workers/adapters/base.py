"""The interface every Kafka client library is put behind. Library errors become AdapterError here."""

from __future__ import annotations

from typing import Any, Callable, NamedTuple, Protocol

AckCallback = Callable[[str | None], None]  # None on success, else "ErrorType: text"


class AdapterError(Exception):
    """A client library call failed; the message is one line."""


class QueueFull(AdapterError):
    """The producer's local queue is full: serve callbacks (`poll`) and send again."""


class Record(NamedTuple):
    key: bytes | None
    value: bytes | None
    headers: list[tuple[str, bytes]] | None
    position: tuple[str, int, int]  # topic, partition, offset

    @property
    def where(self) -> str:
        topic, partition, offset = self.position
        return f"{topic}-{partition}@{offset}"


class KafkaClient(Protocol):
    name: str

    def version(self) -> str: ...

    def open_producer(self, bootstrap_servers: str, config: dict[str, Any], wire_stats: bool = False) -> None:
        """`wire_stats`: count the bytes sent to brokers where that costs something (see wire_bytes)."""

    def open_consumer(self, bootstrap_servers: str, config: dict[str, Any]) -> None: ...

    def send(self, topic: str, key: bytes | None, value: bytes, on_ack: AckCallback,
             headers: list[tuple[str, bytes]] | None = None) -> None:
        """Hand one record to the producer; `on_ack` is called once, when the broker's answer is in.
        Raises QueueFull when the local queue has no room."""

    def poll(self, timeout_s: float) -> None:
        """Serve producer callbacks for up to `timeout_s`."""

    def flush(self, timeout_s: float) -> int:
        """Wait for outstanding acks (serving callbacks); return how many are still outstanding."""

    def assign_at_end(self, topic: str, partition: int, timeout_s: float) -> None:
        """Read `partition` from its current end offset, looked up explicitly so no record is missed."""

    def subscribe(self, topic: str, timeout_s: float, at_end: bool = False) -> None:
        """Join the consumer group and return once partitions are assigned and their positions resolved;
        `at_end`: start at each partition's end offset as it is now, so nothing produced later is missed."""

    def hold(self, held: bool) -> None:
        """Pause (or resume) fetching on every assigned partition, now and after any rebalance, while polling
        goes on: a consumer waiting for the start signal must still take part in its group's rebalances."""

    def poll_record(self, timeout_s: float) -> Record | None:
        """The next record, or None if none arrived within the timeout."""

    def poll_batch(self, timeout_s: float) -> list[Record]:
        """The records that arrived within the timeout (possibly none)."""

    def wire_bytes(self) -> int | None:
        """Bytes the producer sent to brokers (protocol overhead included), if the library counts them."""

    def effective_config(self) -> dict[str, dict[str, Any]]: ...

    def close(self) -> None: ...


def printable(config: dict[str, Any]) -> dict[str, Any]:
    """Config values as JSON can hold them (libraries keep objects such as SSL contexts in there)."""
    return {k: v if isinstance(v, (str, int, float, bool, type(None))) else str(v) for k, v in sorted(config.items())}

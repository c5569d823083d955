"""The interface every Kafka client library is put behind. Library errors become AdapterError here.

Two paths: one record at a time with its own callback (the latency lab's ping-pong), and the bulk path of
the throughput scenarios, where sends go in batches, acknowledgements land in an AckLog and reads come
as a Batch, so that per record only the library's own work and a list append are left."""

from __future__ import annotations

import operator
from typing import Any, Callable, NamedTuple, Protocol, Sequence

from kafkabench.config.redact import redact
from kafkabench.workers.acks import AckLog



class Ack(NamedTuple):
    """The broker's answer to one send: where the record went, or the error the client reported."""

    error: str | None = None  # None on success, else "ErrorName: text"
    partition: int = -1
    offset: int = -1  # -1: the client was told none (acks=0)

    @property
    def error_name(self) -> str | None:
        return self.error.split(":", 1)[0] if self.error else None


AckCallback = Callable[[Ack], None]
Stamp = Callable[[], int]  # called once per record at its send call: the kb-sent-ns header's value

STAMP_HEADER = "kb-sent-ns"  # intended send time, 8-byte big-endian monotonic ns of the producing host


def stamp_headers(nanoseconds: int) -> list[tuple[str, bytes]]:
    return [(STAMP_HEADER, nanoseconds.to_bytes(8, "big", signed=True))]


class AdapterError(Exception):
    """A client library call failed; the message is one line."""


class SendRefused(AdapterError):
    """A tracked send the library refused outright (it never left); the `taken` records before it were handed over."""

    def __init__(self, message: str, taken: int) -> None:
        super().__init__(message)
        self.taken = taken


class TransactionFailed(AdapterError):
    """A commit or abort that did not go through: `abortable`, the transaction must be aborted (and can be); `fatal`,
    the producer can do nothing more; neither: its outcome is unknown."""

    def __init__(self, name: str, message: str, abortable: bool, fatal: bool) -> None:
        super().__init__(f"{name}: {message}")
        self.name, self.abortable, self.fatal = name, abortable, fatal


class Answers(NamedTuple):
    """Answers to tracked sends, read in bulk, in the order they arrived: each message's value (it carries the
    message's id), partition and offset (-1 unless acknowledged; offset -1 also when acks=0 gives none), error
    name (None: acknowledged) and publish latency in microseconds, from the send call to the answer (NaN where the
    client did not say)."""

    values: list[bytes]
    partitions: list[int]
    offsets: list[int]
    errors: list[str | None]
    latencies_us: Any = None  # np.ndarray of float, one per answer


class QueueFull(AdapterError):
    """The producer's local queue is full: serve callbacks (`poll`) and send again."""


class Record(NamedTuple):
    key: bytes | None
    value: bytes | None
    headers: list[tuple[str, bytes]] | None
    position: tuple[str, int, int]  # topic, partition, offset

    @classmethod
    def of(cls, record) -> Record:
        """From a record with attributes (kafka-python's and aiokafka's ConsumerRecord)."""
        return cls(record.key, record.value, record.headers, (record.topic, record.partition, record.offset))

    @property
    def where(self) -> str:
        topic, partition, offset = self.position
        return f"{topic}-{partition}@{offset}"


class Batch:
    """Records read by one call, in the library's own objects; what the measurement needs is read in bulk
    through the library's accessors (C-level `map`, no per-record Python frame where the library allows)."""

    value: Callable[[Any], bytes | None] = staticmethod(operator.attrgetter("value"))
    headers: Callable[[Any], Any] = staticmethod(operator.attrgetter("headers"))
    position: Callable[[Any], tuple[str, int, int]] = staticmethod(operator.attrgetter("topic", "partition", "offset"))
    timestamp: Callable[[Any], int] = staticmethod(operator.attrgetter("timestamp"))  # ms since the epoch

    def __init__(self, records: list) -> None:
        self.records = records

    def __len__(self) -> int:
        return len(self.records)

    def values(self) -> list[bytes | None]:
        return list(map(self.value, self.records))

    def payload_bytes(self) -> int:
        return sum(map(len, filter(None, map(self.value, self.records))))

    def stamps(self) -> list[bytes]:
        """The kb-sent-ns header of every record that has one (8 bytes each)."""
        every = list(map(self.headers, self.records))
        if not any(every):
            return []
        return [value for headers in every if headers for key, value in headers
                if key == STAMP_HEADER and len(value) == 8]

    def timestamps_ms(self) -> list[int]:
        """Each record's timestamp (the producer's create time, or the broker's append time), ms since the epoch."""
        return list(map(self.timestamp, self.records))

    def positions(self) -> list[tuple[str, int, int]]:
        return list(map(self.position, self.records))

    def where(self, index: int) -> str:
        topic, partition, offset = self.position(self.records[index])
        return f"{topic}-{partition}@{offset}"

    def subset(self, records: list) -> Batch:
        return type(self)(records)


class KafkaClient(Protocol):
    name: str

    def version(self) -> str: ...

    def open_producer(self, bootstrap_servers: str, config: dict[str, Any], wire_stats: bool = False,
                      acks: AckLog | None = None, answers: list | None = None) -> None:
        """`wire_stats`: count the bytes sent to brokers where that costs something (see wire_bytes).
        `acks`: where send_many's acknowledgements go; the adapter sets its `to_us` to its latencies' unit.
        `answers`: where send_tracked's answers go, as the library hands them out, one list append each."""

    def open_consumer(self, bootstrap_servers: str, config: dict[str, Any]) -> None: ...

    def send(self, topic: str, key: bytes | None, value: bytes, on_ack: AckCallback,
             headers: list[tuple[str, bytes]] | None = None) -> None:
        """Hand one record to the producer; `on_ack` is called once, when the broker's answer is in.
        Raises QueueFull when the local queue has no room."""

    def send_many(self, topic: str, values: Sequence[bytes], stamp: Stamp | None = None,
                  partition: int | None = None, keys: Sequence[bytes] | None = None) -> int:
        """Hand records to the producer, each acknowledged into the AckLog with its send call -> ack latency;
        return how many were taken: all, or fewer when the local queue filled (serve callbacks, send the rest
        again). A record the library refuses outright is logged as an error and counts as taken. `partition`:
        all of them to that partition; None: where the client's partitioner puts each. `keys`: each value's key."""

    def send_tracked(self, topic: str, values: Sequence[bytes], stamp_ns: int | None = None) -> int:
        """Hand records to the producer, each one's answer appended to `answers` when it arrives (on any thread);
        return how many were taken: all, or fewer when the local queue filled (serve callbacks, send the rest
        again). Raises SendRefused for a record the library refused outright. `stamp_ns`: every record's kb-sent-ns
        header (their intended send time), for an e2e consumer beside them; None: no header."""

    def read_answers(self, entries: list) -> Answers:
        """What a prefix taken from `answers` says, in bulk."""

    # a transactional producer's (its config holds a transactional.id); only the adapters that drive transactions
    # have these: the delivery worker refuses a transactional task for the others
    def init_transactions(self, timeout_s: float) -> None: ...
    def begin_transaction(self) -> None: ...
    def commit_transaction(self, timeout_s: float) -> None:
        """Raises TransactionFailed."""
    def abort_transaction(self, timeout_s: float) -> None:
        """Raises TransactionFailed."""

    def poll(self, timeout_s: float) -> None:
        """Serve producer callbacks for up to `timeout_s`."""

    def flush(self, timeout_s: float) -> int:
        """Wait for outstanding acks (serving callbacks); return how many are still outstanding."""

    def assign_at_end(self, topic: str, partition: int, timeout_s: float) -> None:
        """Read `partition` from its current end offset, looked up explicitly so no record is missed."""

    def subscribe(self, topics: list[str], timeout_s: float, at_end: bool = False,
                  partitions: list[int] | None = None) -> None:
        """Join the consumer group on `topics` and return once partitions are assigned and their positions resolved;
        `at_end`: start at each partition's end offset as it is now, so nothing produced later is missed.
        `partitions`: read these of the one topic, assigned without joining a group, instead."""

    def hold(self, held: bool) -> None:
        """Pause (or resume) fetching on every assigned partition, now and after any rebalance, while polling
        goes on: a consumer waiting for the start signal must still take part in its group's rebalances."""

    def fetching_since_ns(self) -> int | None:
        """When this consumer began fetching (monotonic ns) if it fetches while held; None when held means paused
        (fetching then starts when it is resumed). A client whose pause would delay its first fetch after the
        start keeps fetching while held instead, and says here since when."""

    def poll_record(self, timeout_s: float) -> Record | None:
        """The next record, or None if none arrived within the timeout."""

    def poll_batch(self, timeout_s: float, max_records: int) -> Batch:
        """At most `max_records` records: those already fetched at once, else the first to arrive within the
        timeout (possibly none). Never waits for a batch to fill: a record in hand is handed out."""

    def wire_bytes(self) -> int | None:
        """Bytes the producer sent to brokers (protocol overhead included), if the library counts them."""

    def effective_config(self) -> dict[str, dict[str, Any]]: ...

    def close(self) -> None: ...


def printable(config: dict[str, Any]) -> dict[str, Any]:
    """Config values as JSON can hold them (libraries keep objects such as SSL contexts in there), secrets redacted:
    an effective config travels back to the orchestrator and into the result."""
    plain = {k: v if isinstance(v, (str, int, float, bool, type(None))) else str(v) for k, v in sorted(config.items())}
    return redact(plain)

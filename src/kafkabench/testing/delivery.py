"""Did the application deliver what the test fed it: the delivery lab's exact checker on an application's output.

The test says which ids it produced (one ordered stream, or several: per key, per input partition), and how to find
an id in a record the application wrote (`id_of`, by default the value as text). The output topic is read whole by
a fresh read_committed consumer, and each id counts as the lab counts a message: lost (never read, confirmed by a
second read), duplicated (read more than once, at other offsets), reordered (within one stream and one output
partition, read after an id the test produced later). Records whose id the test never produced are strays; those
`id_of` gives None for are left out (foreign)."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from kafkabench.connection import Connection
from kafkabench.core.delivery_history import MAX_PRODUCER, History
from kafkabench.labs.delivery.checker import Checker, Verdict
from kafkabench.labs.delivery.readback import STALL_S, read_topic
from kafkabench.errors import WaitTimeout
from kafkabench.waiting import wait_until

if TYPE_CHECKING:
    from kafkabench.testing.cluster import KafkaCluster

EXAMPLES = 5
STRAY = MAX_PRODUCER  # the stream number of ids the test never produced: no history, so the checker counts a stray


@dataclass(frozen=True)
class Record:
    """One record of the output topic, as `id_of` gets it."""

    key: bytes | None
    value: bytes | None
    headers: tuple[tuple[str, bytes | None], ...]
    partition: int
    offset: int


def value_text(record: Record) -> str | None:
    """The default `id_of`: the record's value as UTF-8 text."""
    return None if record.value is None else record.value.decode("utf-8", "replace")


@dataclass(frozen=True)
class Delivery:
    """The verdict on one output topic, with examples of each kind of failure (as the test's own ids)."""

    topic: str
    verdict: Verdict
    ordered: bool
    lost: list = field(default_factory=list)  # up to EXAMPLES each
    duplicated: list = field(default_factory=list)
    reordered: list = field(default_factory=list)  # (id, partition, the id produced later and read before it)
    strays: list = field(default_factory=list)

    @property
    def failures(self) -> list[str]:
        v = self.verdict
        found = {"lost": v.lost, "duplicated": v.duplicated, "reordered": v.reordered if self.ordered else 0,
                 "strays": v.strays}
        return [name for name, count in found.items() if count]

    @property
    def exactly_once(self) -> bool:
        return not self.failures

    @property
    def at_least_once(self) -> bool:
        return not self.verdict.lost and not self.verdict.strays

    def assert_exactly_once(self) -> None:
        """AssertionError saying what went wrong, with examples, unless every id was read exactly once (in order
        within its stream and output partition, when `ordered`)."""
        __tracebackhide__ = True  # pytest shows the test's line, not this one
        if not self.exactly_once:
            raise AssertionError(f"not exactly once: {self}")

    def assert_at_least_once(self) -> None:
        """AssertionError unless every id was read at least once (duplicates allowed)."""
        __tracebackhide__ = True
        if not self.at_least_once:
            raise AssertionError(f"not at least once: {self}")

    def __str__(self) -> str:
        v = self.verdict
        parts = [f"{v.lost:,} lost" + _examples(self.lost),
                 f"{v.duplicated:,} duplicate cop{'y' if v.duplicated == 1 else 'ies'} of {v.duplicated_ids:,} id(s)"
                 + _examples(self.duplicated)]
        if self.ordered:
            parts.append(f"{v.reordered:,} reordered" + _examples(
                [f"{i!r} after {later!r} in partition {p}" for i, p, later in self.reordered], quote=False))
        parts.append(f"{v.strays:,} strays (ids never produced)" + _examples(self.strays))
        foreign = f", {v.foreign:,} record(s) without an id" if v.foreign else ""
        return f"topic {self.topic}: {v.sent:,} ids produced, {v.read:,} read{foreign}: " + "; ".join(parts)


def _examples(items: list, quote: bool = True) -> str:
    if not items:
        return ""
    return " (e.g. " + ", ".join(repr(item) if quote else str(item) for item in items) + ")"


def check_delivery(cluster: KafkaCluster | str, topic: str, ids: Sequence[Hashable] | Mapping[Hashable, Sequence],
                   *, id_of: Callable[[Record], Hashable | None] = value_text, ordered: bool = True,
                   wait_s: float = 10.0) -> Delivery:
    """The exact verdict on what the application wrote to `topic`: `ids` the ids the test produced, in the order it
    produced them, or a mapping of streams (a key, an input partition) to their ids in order, when only each stream's
    order is promised. The topic is read again every half second until no id is missing or `wait_s` has passed (the
    application may still be at work), then judged."""
    streams = [list(stream) for stream in (ids.values() if isinstance(ids, Mapping) else [ids])]
    if len(streams) >= STRAY:
        raise ValueError(f"{len(streams)} streams: at most {STRAY - 1}")
    where: dict[Hashable, tuple[int, int]] = {}
    for number, stream in enumerate(streams):
        for sequence, one in enumerate(stream):
            if where.setdefault(one, (number, sequence)) != (number, sequence):
                raise ValueError(f"id {one!r} is produced twice: an id names one message")
    connection = Connection(cluster) if isinstance(cluster, str) else cluster.embedded.connection
    strays: list = []

    def decode(records: list) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        found = [id_of(Record(r.key(), r.value(), tuple(r.headers() or ()), r.partition(), r.offset()))
                 for r in records]
        placed = [where.get(one, (STRAY, 0)) if one is not None else (STRAY, 0) for one in found]
        strays.extend(one for one, (number, _) in zip(found, placed) if one is not None and number == STRAY)
        producer = np.fromiter((number for number, _ in placed), np.uint16, len(placed))
        sequence = np.fromiter((sequence for _, sequence in placed), np.int64, len(placed))
        return producer, sequence, np.array([one is not None for one in found], bool)

    def judged() -> tuple[Checker, Verdict]:
        histories = [_acknowledged(number, len(stream)) for number, stream in enumerate(streams)]
        checker = Checker(histories, idempotent=True)
        strays.clear()
        for chunk in read_topic(connection, topic, STALL_S, decode=decode):
            checker.feed(chunk)
        # the second read is whole: the test knows where it sent its ids, not where the application put them
        checker.confirm(read_topic(connection, topic, STALL_S, decode=decode) if checker.missing().count else ())
        return checker, checker.result()

    last: list = []

    def complete() -> bool:
        last[:] = judged()
        return not last[1].lost

    try:
        wait_until(complete, timeout_s=wait_s, what=f"every id in {topic}", interval_s=0.5)
    except WaitTimeout:
        pass  # judged as it stands: the verdict names what is missing
    checker, verdict = last
    missing = checker.missing()
    return Delivery(topic, verdict, ordered, lost=_named(missing.producer, missing.sequence, streams),
                    duplicated=[streams[n][s] for n in range(len(streams))
                                for s in np.flatnonzero(checker.copied(n))[:EXAMPLES].tolist()][:EXAMPLES],
                    reordered=[(streams[n][s], p, streams[n][later]) for n, p, s, later in checker.reorder_examples],
                    strays=list(dict.fromkeys(strays))[:EXAMPLES])


def _acknowledged(number: int, count: int) -> History:
    """A stream's history: every id acknowledged, at no known place (the application wrote it, not the test)."""
    history = History(number, count)
    history.record_acks(np.arange(count), 0, np.full(count, -1, np.int64))
    return history


def _named(producers: np.ndarray, sequences: np.ndarray, streams: list[list]) -> list:
    return [streams[n][s] for n, s in zip(producers[:EXAMPLES].tolist(), sequences[:EXAMPLES].tolist())]

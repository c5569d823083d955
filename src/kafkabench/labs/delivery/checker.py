"""The exact delivery checker: the producers' histories against what was read back.

The read-back is what a fresh read_committed consumer read from every partition, earliest to end offset.
It reaches `Checker.feed` in chunks (`ReadChunk`: producer, sequence, partition, offset arrays in read order;
within a partition, offset order), so it is never held in memory at once: the checker keeps two bits per
message sent (read once, read more than once) and a running maximum per (producer, partition).
Records whose value is not a kafkabench id are left out of the arrays by whoever decodes them and counted in
the chunk's `foreign`.

What a run's `Verdict` counts:

- sent, acknowledged, failed, unknown: the histories' statuses.
- read: records read that carry a kafkabench id; foreign: records that do not; strays: records whose id no
  history sent (a producer without a history, a sequence past its count): then the histories do not
  describe the topic and no other count can be trusted.
- lost: acknowledged and never read back. Confirmed: a loss is counted only if a second fresh read of the
  missing ids' partitions (`missing()`, `confirm`) does not find them either; unconfirmed_misses: those
  the second read found.
- duplicated: copies read beyond an id's first (every (partition, offset) is read once, which `feed`
  checks, so these are copies written at other offsets, not a consumer reading one record twice);
  duplicated_ids: ids read more than once.
- reordered: within one producer and one partition, a first read of an id whose sequence is lower than a
  sequence of the same producer read before it in that partition (by any read, copies included; the
  read-back's order across chunks counts). A duplicate's later copy is a duplicate, not a reorder.
- delivered_despite_error: failed sends that were read back. Reported, not a failure: a client that gives up
  on a send cannot know whether the broker wrote it.
- unknown_found, unknown_not_found: sends without an answer, read back or not (neither is a failure).
- offset_mismatch: acknowledged ids with an offset, read back, but never at their acknowledged
  (partition, offset).
- delivered %: distinct ids read back (by either read) / sent.

Failures are the counts a setting promises to be zero: lost, offset_mismatch and strays always; duplicated
and reordered only when the producer is idempotent.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import asdict, dataclass
from typing import Callable, Iterable, NamedTuple, Sequence

import numpy as np

from kafkabench.errors import KafkabenchError
from kafkabench.core.delivery_history import ACKNOWLEDGED, FAILED, MAX_PRODUCER, UNKNOWN, History

TALLY_SLICE = 1 << 18  # whole-history passes go a slice at a time: a few MB of temporaries
TALLIED = ("acknowledged", "failed", "unknown", "distinct_read", "duplicated_ids", "acked_read",
           "acked_read_with_offset", "delivered_despite_error", "unknown_found")
EXAMPLES = 5  # reorders kept as examples: (producer, partition, sequence, the higher sequence read before it)
SHIFT = 32  # sequences fit in 32 bits: (group or slot) << SHIFT | sequence is one sortable int64


class ReadBackError(KafkabenchError):
    """The read-back is not what the checker counts on: every offset of a partition once, in order."""


class Bits:
    """One bit per sequence of a producer: a quarter of a byte a message for two of them."""

    def __init__(self, size: int):
        self.size = size
        self.bytes = np.zeros((size + 7) // 8, np.uint8)

    def test(self, ids: np.ndarray) -> np.ndarray:
        return (self.bytes[ids >> 3] >> (ids & 7)) & 1 == 1

    def set(self, ids: np.ndarray) -> None:
        """`ids` ascending, each once: the bits of one byte are or-ed together first, since a fancy-indexed
        `|=` would keep only one of them."""
        if not len(ids):
            return
        byte = ids >> 3
        starts = np.flatnonzero(np.r_[True, byte[1:] != byte[:-1]])
        self.bytes[byte[starts]] |= np.bitwise_or.reduceat(np.left_shift(1, ids & 7).astype(np.uint8), starts)

    def slice(self, start: int, end: int) -> np.ndarray:
        """The bits of [start, end) as bools; `start` a multiple of 8."""
        end = min(end, self.size)
        return np.unpackbits(self.bytes[start >> 3:(end + 7) >> 3], bitorder="little")[:end - start].view(bool)


class ReadChunk(NamedTuple):
    """Records read, in read order (within a partition, offset order), as parallel arrays."""

    producer: np.ndarray  # uint16
    sequence: np.ndarray  # uint32 or int64
    partition: np.ndarray  # int32
    offset: np.ndarray  # int64
    foreign: int = 0  # records read in this stretch whose value was not a kafkabench id
    # the checker keeps no reference to the arrays once `feed` returns: a reader may reuse its buffers


class Missing(NamedTuple):
    """Acknowledged ids not read back (yet): who sent them and where the acknowledgement put them."""

    producer: np.ndarray
    sequence: np.ndarray
    partition: np.ndarray
    offset: np.ndarray

    @property
    def count(self) -> int:
        return len(self.sequence)

    def spans(self) -> list[tuple[int, int, int | None]]:
        """(partition, first offset, last offset) per partition: what a second read has to cover. Last is None
        (read to the end) when an id of the partition was acknowledged without an offset."""
        spans = []
        for partition in np.unique(self.partition).tolist():
            offsets = self.offset[self.partition == partition]
            low, high = int(offsets.min()), int(offsets.max())
            spans.append((partition, 0, None) if low < 0 else (partition, low, high))
        return spans


@dataclass(frozen=True)
class Verdict:
    """One run's counts; see the module docstring for what each one means."""

    idempotent: bool
    sent: int
    acknowledged: int
    failed: int
    unknown: int
    read: int
    foreign: int
    strays: int
    distinct_read: int
    lost: int
    unconfirmed_misses: int
    loss_confirmed: bool
    duplicated: int
    duplicated_ids: int
    reordered: int
    delivered_despite_error: int
    unknown_found: int
    unknown_not_found: int
    offset_mismatch: int

    @property
    def delivered_pct(self) -> float | None:
        return 100 * (self.distinct_read + self.unconfirmed_misses) / self.sent if self.sent else None

    @property
    def lost_pct(self) -> float | None:
        return 100 * self.lost / self.acknowledged if self.acknowledged else None

    @property
    def failures(self) -> list[str]:
        promised = ["lost"] + (["duplicated", "reordered"] if self.idempotent else []) + ["offset_mismatch", "strays"]
        return [name for name in promised if getattr(self, name)]

    def to_dict(self) -> dict:
        return asdict(self) | {"delivered_pct": self.delivered_pct, "lost_pct": self.lost_pct,
                               "failures": self.failures}


class Checker:
    """Feed the first read chunk by chunk, then optionally `confirm` the misses with a second read, then
    `result()`."""

    def __init__(self, histories: Sequence[History], idempotent: bool):
        producers = [history.producer for history in histories]
        if len(set(producers)) != len(producers):
            raise ValueError(f"two histories for one producer: {sorted(producers)}")
        if any(history.sent > 1 << SHIFT for history in histories):
            raise ValueError(f"a producer sent more than {1 << SHIFT} messages")
        self.histories = list(histories)
        self.idempotent = idempotent
        self._slot = np.full(MAX_PRODUCER + 1, -1, np.int32)  # producer id -> index in histories
        self._slot[producers] = np.arange(len(producers), dtype=np.int32)
        self._sent = np.array([history.sent for history in histories] + [0], np.int64)  # [-1]: no history
        self._read = [Bits(history.sent) for history in histories]  # read at least once
        self._copied = [Bits(history.sent) for history in histories]  # read more than once
        self._last_offset: dict[int, int] = {}  # partition -> last offset read
        self._max_sequence: dict[tuple[int, int], int] = {}  # (slot, partition) -> highest sequence read
        self._counts = dict.fromkeys(("read", "foreign", "strays", "duplicated", "reordered", "at_ack"), 0)
        self.reorder_examples: list[tuple[int, int, int, int]] = []  # the first EXAMPLES reorders
        self._confirmation: tuple[Missing, np.ndarray, np.ndarray] | None = None  # misses, their keys, found

    @property
    def nbytes(self) -> int:
        """The checker's own memory, by messages sent (the histories are the caller's)."""
        return sum(bits.bytes.nbytes for bits in self._read + self._copied)

    def feed(self, chunk: ReadChunk) -> None:
        if self._confirmation is not None:
            raise ValueError("feed after confirm: the first read is over")
        self._counts["foreign"] += int(chunk.foreign)
        slot, sequence, partition, offset, valid = self._ids(chunk)
        self._counts["read"] += len(valid)
        if not valid.all():
            self._counts["strays"] += int(np.count_nonzero(~valid))
            slot, sequence, partition, offset = slot[valid], sequence[valid], partition[valid], offset[valid]
        if not len(slot):
            return
        order = self._partition_order(partition, offset)
        order = order[np.argsort(slot[order], kind="stable")]  # by producer, partition, then read order
        first = self._first_reads(slot, sequence, partition, offset, order)
        self._count_reorders(slot[order], partition[order], sequence[order], first)

    def missing(self) -> Missing:
        """Acknowledged ids not read back: by the first read, and by the second once `confirm` ran."""
        if self._confirmation is None:
            return self._first_misses()
        misses, _, found = self._confirmation
        return Missing(*(array[~found] for array in misses))

    def confirm(self, chunks: Iterable[ReadChunk]) -> None:
        """A second fresh read: the misses it finds are not losses. May be called again to read more."""
        if self._confirmation is None:
            misses = self._first_misses()
            keys = self._slot[misses.producer].astype(np.int64) << SHIFT | misses.sequence
            self._confirmation = misses, keys, np.zeros(len(keys), bool)
        _, keys, found = self._confirmation
        for chunk in chunks:
            slot, sequence, _, _, valid = self._ids(chunk)
            read = slot[valid].astype(np.int64)
            read <<= SHIFT
            read |= sequence[valid]
            at = np.minimum(np.searchsorted(keys, read), max(len(keys) - 1, 0))
            if len(keys):
                found[at[keys[at] == read]] = True

    def seen(self, index: int) -> np.ndarray:
        """Whether each sequence of history `index` was read, by the first read or by the confirming one."""
        seen = self._read[index].slice(0, self.histories[index].sent).copy()
        if self._confirmation is not None:
            _, keys, found = self._confirmation
            mine = keys[found]
            mine = mine[(mine >> SHIFT) == index] & ((1 << SHIFT) - 1)
            seen[mine] = True
        return seen

    def copied(self, index: int) -> np.ndarray:
        """Whether each sequence of history `index` was read more than once."""
        return self._copied[index].slice(0, self.histories[index].sent).copy()

    def statuses(self, chunk: ReadChunk) -> np.ndarray:
        """The history status of each record of a chunk whose id a history sent (strays left out)."""
        slot, sequence, _, _, valid = self._ids(chunk)
        slot, sequence = slot[valid], sequence[valid]
        found = np.empty(len(slot), np.uint8)
        for index, history in enumerate(self.histories):
            mine = slot == index
            found[mine] = history.status[sequence[mine]]
        return found

    def result(self) -> Verdict:
        tallied = Counter()
        for history, read, copied in zip(self.histories, self._read, self._copied):
            tallied.update(_tally(history, read, copied))
        totals = {name: int(tallied[name]) for name in TALLIED}
        misses = totals["acknowledged"] - totals["acked_read"]
        found_again = int(np.count_nonzero(self._confirmation[2])) if self._confirmation else 0
        counts = self._counts
        return Verdict(
            idempotent=self.idempotent, sent=int(self._sent.sum()), acknowledged=totals["acknowledged"],
            failed=totals["failed"], unknown=totals["unknown"], read=counts["read"], foreign=counts["foreign"],
            strays=counts["strays"], distinct_read=totals["distinct_read"], lost=misses - found_again,
            unconfirmed_misses=found_again, loss_confirmed=self._confirmation is not None,
            duplicated=counts["duplicated"], duplicated_ids=totals["duplicated_ids"], reordered=counts["reordered"],
            delivered_despite_error=totals["delivered_despite_error"], unknown_found=totals["unknown_found"],
            unknown_not_found=totals["unknown"] - totals["unknown_found"],
            offset_mismatch=totals["acked_read_with_offset"] - counts["at_ack"])

    def _ids(self, chunk: ReadChunk):
        """The chunk's arrays, each record's history slot, and whether a history sent its id."""
        producer = np.asarray(chunk.producer)
        sequence = np.asarray(chunk.sequence)  # uint32 or int64: no copy, other integers work too
        partition, offset = np.asarray(chunk.partition), np.asarray(chunk.offset)
        if not len(producer) == len(sequence) == len(partition) == len(offset):
            raise ValueError(f"a chunk's arrays differ in length: {len(producer)}, {len(sequence)}, "
                             f"{len(partition)}, {len(offset)}")
        if producer.dtype == np.uint16:
            slot = self._slot[producer]
        else:
            known = (producer >= 0) & (producer <= MAX_PRODUCER)
            slot = np.where(known, self._slot[np.where(known, producer, 0)], -1)
        valid = (slot >= 0) & (sequence < self._sent[slot])
        if sequence.dtype.kind == "i":
            valid &= sequence >= 0
        return slot, sequence, partition, offset, valid

    def _partition_order(self, partition: np.ndarray, offset: np.ndarray) -> np.ndarray:
        """The chunk's positions by partition, read order kept; refuses an offset read twice or backwards."""
        order = np.argsort(partition, kind="stable")
        partition, offset = partition[order], offset[order]
        same = partition[1:] == partition[:-1]
        backwards = np.flatnonzero(same & (offset[1:] <= offset[:-1]))
        if len(backwards):
            at = backwards[0]
            _refuse(int(partition[at]), int(offset[at + 1]), int(offset[at]))
        starts = np.flatnonzero(np.r_[True, ~same])
        ends = np.r_[starts[1:], len(order)]
        for start, end in zip(starts.tolist(), ends.tolist()):
            number = int(partition[start])
            last = self._last_offset.get(number, -1)
            if offset[start] <= last:
                _refuse(number, int(offset[start]), last)
            self._last_offset[number] = int(offset[end - 1])
        return order

    def _first_reads(self, slot, sequence, partition, offset, order) -> np.ndarray:
        """Marks, in `order`, each id's first read ever; counts copies and reads at the acknowledged offset."""
        first = np.zeros(len(order), bool)
        sorted_slots = slot[order]
        starts = np.flatnonzero(np.r_[True, sorted_slots[1:] != sorted_slots[:-1]])
        for start, end in zip(starts.tolist(), np.r_[starts[1:], len(order)].tolist()):
            k = int(sorted_slots[start])
            history, read, copied = self.histories[k], self._read[k], self._copied[k]
            positions = order[start:end]
            to_read_order = np.argsort(positions)
            ids = sequence[positions[to_read_order]]
            unique, first_at, copies = np.unique(ids, return_index=True, return_counts=True)
            before = read.test(unique)
            new = ~before
            first[start + to_read_order[first_at[new]]] = True
            read.set(unique[new])
            copied.set(unique[before | (copies > 1)])
            self._counts["duplicated"] += end - start - int(np.count_nonzero(new))
            ids = sequence[positions]
            at_ack = (history.offset[ids] == offset[positions]) & (history.partition[ids] == partition[positions])
            self._counts["at_ack"] += int(np.count_nonzero(at_ack))  # an offset holds one record: one hit per id
        return first

    def _count_reorders(self, slot, partition, sequence, first) -> None:
        """Arrays sorted by (slot, partition, read order): a first read below the running maximum of the
        sequences read before it in its group, this chunk's and earlier chunks', is a reorder."""
        starts = np.flatnonzero(np.r_[True, (slot[1:] != slot[:-1]) | (partition[1:] != partition[:-1])])
        lengths = np.diff(np.r_[starts, len(slot)])
        keys = list(zip(slot[starts].tolist(), partition[starts].tolist()))
        carried = np.array([self._max_sequence.get(key, -1) for key in keys], np.int64)
        running = np.repeat(np.arange(len(starts), dtype=np.int64) << SHIFT, lengths)
        running += sequence  # (group, sequence) in one int64: one running max that restarts at each group
        np.maximum.accumulate(running, out=running)
        running &= (1 << SHIFT) - 1
        before = np.repeat(carried, lengths)
        np.maximum(before[1:], running[:-1], out=before[1:])
        before[starts] = carried  # a group's first record comes after the earlier chunks only
        reordered = first & (sequence < before)
        self._counts["reordered"] += int(np.count_nonzero(reordered))
        for at in np.flatnonzero(reordered)[:EXAMPLES - len(self.reorder_examples)].tolist():
            self.reorder_examples.append((self.histories[int(slot[at])].producer, int(partition[at]), int(sequence[at]),
                                          int(before[at])))
        for key, high, last in zip(keys, carried.tolist(), running[starts + lengths - 1].tolist()):
            self._max_sequence[key] = max(high, last)

    def _first_misses(self) -> Missing:
        parts = [(np.zeros(0, np.uint16), np.zeros(0, np.int64), np.zeros(0, np.int32), np.zeros(0, np.int64))]
        for history, read in zip(self.histories, self._read):
            for start in range(0, history.sent, TALLY_SLICE):
                end = start + TALLY_SLICE
                at = start + np.flatnonzero((history.status[start:end] == ACKNOWLEDGED) & ~read.slice(start, end))
                parts.append((np.full(len(at), history.producer, np.uint16), at, history.partition[at],
                              history.offset[at]))
        return Missing(*(np.concatenate(arrays) for arrays in zip(*parts)))


def check(histories: Sequence[History], read_back: Iterable[ReadChunk], idempotent: bool,
          second_read: Callable[[Missing], Iterable[ReadChunk]] | None = None) -> Verdict:
    """The whole check: the first read, then, if there are misses and a `second_read`, their confirmation."""
    checker = Checker(histories, idempotent)
    for chunk in read_back:
        checker.feed(chunk)
    if second_read is not None:
        misses = checker.missing()
        checker.confirm(second_read(misses) if misses.count else ())
    return checker.result()


def _tally(history: History, read: Bits, copied: Bits) -> Counter:
    """The status counts of one history."""
    counts = Counter()
    for start in range(0, history.sent, TALLY_SLICE):
        end = start + TALLY_SLICE
        status, offset, seen = history.status[start:end], history.offset[start:end], read.slice(start, end)
        acked, failed, unknown = status == ACKNOWLEDGED, status == FAILED, status == UNKNOWN
        counts.update(dict(zip(TALLIED, map(np.count_nonzero, (
            acked, failed, unknown, seen, copied.slice(start, end), acked & seen, acked & seen & (offset >= 0),
            failed & seen, unknown & seen)))))
    return counts


def _refuse(partition: int, offset: int, after: int) -> None:
    raise ReadBackError(f"partition {partition}: offset {offset} read after offset {after}; the read-back must "
                        f"give every offset of a partition once, in offset order (a consumer that re-read after a "
                        f"rebalance or seek would make duplicates out of nothing)")

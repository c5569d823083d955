"""How long each partition went unread while a record waited on it, and how long the whole group stopped, from the
members' histories: when each record was processed (wall-clock ns) and its own timestamp (ms).

A partition is **unread** from the moment one of its records waits (its timestamp, or the previous processing on the
partition if that came later) until that record is processed. For a partition's processings in time order
t_1 < t_2 < ..., the span before t_i runs from max(t_(i-1), created_i) to t_i; a record processed again after a
rebalance was created long before, so the span is the whole time since the partition's previous processing. A span
belongs to a change when it overlaps the change's window. The group's **stop-the-world** time is the longest interval
in which the group processed nothing at all while a record waited: for all processings in time order, the span before
t_i runs from max(t_(i-1), the earliest timestamp of any record processed at t_i or later) to t_i. It does not need
every partition to have a record waiting, so a sparse partition cannot hide a stop.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

NS = 1_000_000_000


@dataclass(frozen=True)
class Processings:
    """Every processing of the run, one row each: its partition, when it happened (ns), the record's timestamp (ns)."""

    partition: np.ndarray
    at_ns: np.ndarray
    created_ns: np.ndarray

    @classmethod
    def of(cls, partition_of: np.ndarray, histories: list) -> Processings:
        """From the producer's partition per sequence and each member's history (core.delivery_processed.Processed):
        each sequence a member processed, at the last time that member processed it."""
        parts, at, created = [], [], []
        for history in histories:
            done = np.flatnonzero((history.counts > 0) & (history.processed_at > 0))
            parts.append(partition_of[done])
            at.append(history.processed_at[done])
            created.append(history.created_at[done] * 1_000_000)
        joined = [np.concatenate(column) if column else np.zeros(0, np.int64) for column in (parts, at, created)]
        return cls(*joined)

    @classmethod
    def joined(cls, parts: list[Processings]) -> Processings:
        """Several inputs' processings as one (their partitions numbered apart already)."""
        return cls(*(np.concatenate([getattr(part, name) for part in parts]) for name in ("partition", "at_ns",
                                                                                            "created_ns")))


@dataclass(frozen=True)
class Gaps:
    """Within one window: each partition's longest unread span (s), and the longest time all were unread at once."""

    longest_s: dict[int, float]
    stop_the_world_s: float
    stop_the_world_from_ns: int | None  # where it began (wall clock), None when there was none

    @property
    def worst_s(self) -> float:
        return max(self.longest_s.values(), default=0.0)

    @property
    def median_s(self) -> float:
        return float(np.median(list(self.longest_s.values()))) if self.longest_s else 0.0


def unread_spans(processings: Processings) -> dict[int, np.ndarray]:
    """Per partition, its unread spans as rows (start_ns, end_ns), in time order, empty ones left out."""
    order = np.lexsort((processings.at_ns, processings.partition))
    partition, at, created = (column[order] for column in (processings.partition, processings.at_ns,
                                                             processings.created_ns))
    first = np.ones(len(at), bool)
    first[1:] = partition[1:] != partition[:-1]  # a partition's first processing: only its record waited before
    previous = np.where(first, created, np.concatenate([at[:1], at[:-1]]))
    start = np.maximum(previous, created)
    kept = at > start
    bounds = np.flatnonzero(first).tolist() + [len(at)]
    return {int(partition[lo]): np.column_stack([start[lo:hi][kept[lo:hi]], at[lo:hi][kept[lo:hi]]])
            for lo, hi in zip(bounds[:-1], bounds[1:])}


@dataclass(frozen=True)
class Spans:
    """A run's unread spans, read once from its processings: per partition, and the group's idle ones."""

    unread: dict[int, np.ndarray]
    idle: np.ndarray

    @classmethod
    def of(cls, processings: Processings) -> Spans:
        return cls(unread_spans(processings), idle_spans(processings))

    def gaps(self, window: tuple[int, int], whole: bool = False) -> Gaps:
        """The spans that overlap `window` (wall-clock ns, inclusive), or with `whole` only those entirely inside it
        (the steady time before a change, which a span the change prolonged must not count in): each partition's
        longest, and the group's longest stop."""
        longest = {partition: _longest(_inside(spans, window, whole)) for partition, spans in self.unread.items()}
        stops = _inside(self.idle, window, whole)
        stopped = _longest(stops)
        start = int(stops[np.argmax(stops[:, 1] - stops[:, 0]), 0]) if stopped else None
        return Gaps({partition: length / NS for partition, length in longest.items()}, stopped / NS, start)


def gaps(processings: Processings, window: tuple[int, int], whole: bool = False) -> Gaps:
    """Spans.of(processings).gaps(window, whole), for one window."""
    return Spans.of(processings).gaps(window, whole)


def idle_spans(processings: Processings) -> np.ndarray:
    """The group's spans (start_ns, end_ns) in which it processed nothing while a record waited, in time order."""
    order = np.argsort(processings.at_ns, kind="stable")
    at, created = processings.at_ns[order], processings.created_ns[order]
    if not len(at):
        return np.zeros((0, 2), np.int64)
    waiting_since = np.minimum.accumulate(created[::-1])[::-1]  # the oldest record still to be processed at each t_i
    start = np.maximum(np.concatenate([waiting_since[:1], at[:-1]]), waiting_since)
    kept = at > start
    return np.column_stack([start[kept], at[kept]])


def _inside(spans: np.ndarray, window: tuple[int, int], whole: bool) -> np.ndarray:
    begin, end = window
    return spans[(spans[:, 0] >= begin) & (spans[:, 1] <= end)] if whole else \
        spans[(spans[:, 1] >= begin) & (spans[:, 0] <= end)]


def _longest(spans: np.ndarray) -> int:
    return int((spans[:, 1] - spans[:, 0]).max()) if len(spans) else 0

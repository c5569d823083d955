"""Liveness, the other half of a verdict under faults: did each process keep making progress while it had work?

A process's progress is a count that only grows (messages acknowledged, processed, committed); `Track` records it
with whether work was waiting for the process (messages sent and not yet answered; records behind the group's
committed offset on a partition it holds), as seen at the moment of each look. A stall is a stretch of time in which
work was waiting and the count did not grow for more than STALL_MIN_S: it begins at the later of the last growth and
the moment work began to wait, and ends at the look that saw the count grow again (`recovered`), saw no work waiting any more (`released`:
its partitions went to another member), or at the process's end, which says how it ended (`replaced` after the stall
bound, `killed` by a fault, `exited`, or still `stuck` when the run ended). The resolution is the looks' interval.

`windows` turns the same cumulative counts into progress per window of fixed length, the series a chart can show a
stall and a recovery on without dividing a burst by a sliver of time.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

STALL_MIN_S = 1.0  # pauses up to this long are the looks' own granularity, not stalls worth counting


@dataclass(frozen=True)
class Sample:
    t_s: float
    count: int
    waiting: bool


@dataclass(frozen=True)
class Stall:
    began_s: float
    ended_s: float
    how: str  # recovered | released | replaced | killed | exited | stuck

    @property
    def length_s(self) -> float:
        return self.ended_s - self.began_s


class _Detector:
    """The stalls of a series fed one sample at a time; `since` is when the open one began (None: none open)."""

    def __init__(self) -> None:
        self.found: list[Stall] = []
        self._previous: Sample | None = None
        self._last_growth = 0.0
        self._waiting_from: float | None = None  # None: no work waiting at the last sample

    @property
    def since(self) -> float | None:
        return None if self._waiting_from is None else max(self._last_growth, self._waiting_from)

    def feed(self, sample: Sample) -> None:
        previous = self._previous
        grew = previous is None or sample.count > previous.count
        if self.since is not None and (grew or not sample.waiting) and sample.t_s - self.since > STALL_MIN_S:
            self.found.append(Stall(self.since, sample.t_s, "recovered" if grew else "released"))
        if grew:
            self._last_growth = sample.t_s
        if not sample.waiting:
            self._waiting_from = None
        elif self._waiting_from is None:
            self._waiting_from = sample.t_s
        self._previous = sample

    def ended(self, end_s: float, how: str) -> list[Stall]:
        """The stalls, one still open ending at `end_s` as `how` says."""
        since = self.since
        if since is None or max(end_s, self._previous.t_s) - since <= STALL_MIN_S:
            return list(self.found)
        return [*self.found, Stall(since, max(end_s, self._previous.t_s), how)]


def stalls(samples: Sequence[Sample], end_s: float | None = None, how_ended: str = "stuck") -> list[Stall]:
    """Every stall in a recorded series (in time order); one still open at the last sample ends at `end_s` (the
    process's end, default the last sample) as `how_ended` says."""
    detector = _Detector()
    for sample in samples:
        detector.feed(sample)
    return detector.ended(end_s if end_s is not None else samples[-1].t_s if samples else 0.0, how_ended)


class Track:
    """One process's progress as the orchestrator sees it, from two sources that note on their own threads: its
    reports (the count) and the looks at its work (waiting). Seconds on the caller's clock."""

    def __init__(self) -> None:
        self._count, self._waiting = 0, False
        self._detector = _Detector()
        self._lock = threading.Lock()

    def note(self, t_s: float, count: int | None = None, waiting: bool | None = None) -> None:
        with self._lock:
            if count is not None:
                self._count = max(self._count, count)
            if waiting is not None:
                self._waiting = waiting
            self._detector.feed(Sample(t_s, self._count, self._waiting))

    def stalled_for(self, now_s: float) -> float:
        """How long the stall open now has lasted (0: none open)."""
        since = self._detector.since
        return 0.0 if since is None else max(0.0, now_s - since)

    def verdict(self, end_s: float, how_ended: str) -> Liveness:
        with self._lock:
            return Liveness.of(self._detector.ended(end_s, how_ended))


@dataclass(frozen=True)
class Liveness:
    """A process's liveness verdict: its longest stall (None: it never stalled) and how many stalls it had."""

    longest: Stall | None
    stalls: int

    @classmethod
    def of(cls, found: Iterable[Stall]) -> Liveness:
        counted = [stall for stall in found if stall.length_s > STALL_MIN_S]
        return cls(max(counted, key=lambda stall: stall.length_s, default=None), len(counted))

    def to_dict(self, origin_s: float = 0.0) -> dict:
        """As a result keeps it, in seconds from `origin_s` (the run's start, as its faults count)."""
        if self.longest is None:
            return {"longest_stall_s": 0.0, "stalls": 0}
        return {"longest_stall_s": round(self.longest.length_s, 3), "stalls": self.stalls,
                "began_s": round(self.longest.began_s - origin_s, 3),
                "ended_s": round(self.longest.ended_s - origin_s, 3), "ended": self.longest.how}


def against_faults(began_s: float, ended_s: float, faults: list[dict]) -> str:
    """Where a stall sits against the run's faults (`fired_s`, `healed_s` on the same clock), in words: against the
    last fault that fired before the stall ended (during it, or before it began)."""
    fired = [event for event in faults if event.get("fired_s") is not None and event["fired_s"] <= ended_s]
    if not fired:
        return "before any fault"
    event = fired[-1]
    what = f"{event['fault']}" + (f" of broker {event['broker']}" if event.get("broker") is not None else "")
    lead = began_s - event["fired_s"]
    when = "as" if abs(lead) < 0.05 else f"{abs(lead):.1f} s {'after' if lead > 0 else 'before'}"
    where = f"{when} {what} fired at {event['fired_s']:.1f} s"
    healed = event.get("healed_s")
    if healed is None:
        return f"began {where}, which never healed"
    if began_s > healed:
        return f"began {where}, {began_s - healed:.1f} s after it healed"
    gap = ended_s - healed
    return f"began {where}; ended " + ("as it healed" if abs(gap) < 0.05 else
                                       f"{abs(gap):.1f} s {'after' if gap > 0 else 'before'} it healed")


def windows(series: Sequence[Sequence[tuple[float, int]]], width_s: float, end_s: float) -> list[int]:
    """Per window [k * width, (k + 1) * width) from 0 to `end_s`: how much the cumulative counts of the given
    processes grew in it, together. Each process's series is (t_s, count) in time order, counting from 0 where it
    starts (a replacement process starts again from 0)."""
    bins = [0] * max(1, math.ceil(end_s / width_s))
    for points in series:
        before = 0
        for t_s, count in points:
            if count > before:
                bins[min(len(bins) - 1, max(0, int(t_s // width_s)))] += count - before
                before = count
    return bins

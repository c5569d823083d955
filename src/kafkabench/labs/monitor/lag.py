"""Consumer lag as `kafkabench monitor` reports it: in offsets, in seconds, and as a Burrow-style status.

**Lag in seconds** is the age of the oldest record the group has not consumed: now minus the moment the record at
the group's committed offset was produced. That moment is estimated, as kafka-lag-exporter does, from a history of
the partition's end offset sampled over time (`EndOffsets`): the record at offset c was produced when the end
offset passed c, between two samples, interpolated linearly. A committed offset older than the history gives a
lower bound (`at_least`), never an invented figure. A group at the end offset has a lag of 0 s.

**Status** per partition, over a window of the group's committed offsets polled at the monitor's interval (after
Burrow's consumer lag evaluation rules, with one change: the admin API gives no commit timestamps, so a group that
stopped is told by its having no members):

- REWIND: the committed offset went backwards within the window;
- STOP: lag, and the group has no members: nobody is consuming;
- OK: the lag was zero at some point in the window (or the window has fewer than two polls);
- STALL: lag, members, and the committed offset did not move over the window while the lag held or grew;
- WARNING: the committed offset moves, but the lag never went down over the window: falling behind;
- OK otherwise (catching up).

A group's status is its worst partition's, in the order STOP, STALL, REWIND, WARNING, OK.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import NamedTuple

STATUSES = ("OK", "WARNING", "REWIND", "STALL", "STOP")  # worst last


class Sample(NamedTuple):
    time_s: float
    end_offset: int


class Poll(NamedTuple):
    time_s: float
    committed: int
    lag: int


@dataclass(frozen=True)
class LagSeconds:
    seconds: float
    at_least: bool = False  # the oldest unconsumed record is older than the end-offset history: a lower bound


class EndOffsets:
    """One partition's end offset over time, the last `size` samples (a fixed ring: memory stays flat)."""

    def __init__(self, size: int) -> None:
        self._samples: deque[Sample] = deque(maxlen=size)

    def add(self, time_s: float, end_offset: int) -> None:
        if self._samples and end_offset == self._samples[-1].end_offset and len(self._samples) > 1 \
                and self._samples[-2].end_offset == end_offset:
            self._samples[-1] = Sample(time_s, end_offset)  # an idle partition keeps its first and last sample only
        else:
            self._samples.append(Sample(time_s, end_offset))

    @property
    def latest(self) -> Sample | None:
        return self._samples[-1] if self._samples else None

    def lag_seconds(self, committed: int, now_s: float) -> LagSeconds | None:
        """The age of the record at `committed`; None without any sample."""
        if not self._samples:
            return None
        if committed >= self._samples[-1].end_offset:
            return LagSeconds(0.0)
        earlier = None
        for sample in self._samples:
            if sample.end_offset > committed:
                if earlier is None:
                    return LagSeconds(max(0.0, now_s - sample.time_s), at_least=True)
                share = (committed + 1 - earlier.end_offset) / (sample.end_offset - earlier.end_offset)
                produced_s = earlier.time_s + share * (sample.time_s - earlier.time_s)
                return LagSeconds(max(0.0, now_s - produced_s))
            earlier = sample
        return LagSeconds(0.0)  # not reached: the last sample is past `committed`


def partition_status(window: list[Poll], members: int) -> str:
    """One partition's status over its window of polls, oldest first."""
    if any(later.committed < earlier.committed for earlier, later in zip(window, window[1:])):
        return "REWIND"
    if window and window[-1].lag > 0 and members == 0:
        return "STOP"
    if len(window) < 2 or any(poll.lag == 0 for poll in window):
        return "OK"
    lag_never_fell = all(later.lag >= earlier.lag for earlier, later in zip(window, window[1:]))
    if window[-1].committed == window[0].committed and lag_never_fell:
        return "STALL"
    if lag_never_fell:
        return "WARNING"
    return "OK"


def group_status(statuses: list[str]) -> str:
    """The worst of its partitions' statuses; OK for a group without partitions."""
    return max(statuses, key=STATUSES.index, default="OK")

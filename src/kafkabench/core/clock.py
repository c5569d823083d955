"""Time in integer nanoseconds from a monotonic clock, injectable so tests can drive it.

On Linux CLOCK_MONOTONIC is system-wide, so stamps taken by two processes on one host are comparable.
"""

from __future__ import annotations

import time
from typing import Callable

Clock = Callable[[], int]

monotonic_ns: Clock = time.monotonic_ns


def shifted(offset_ns: int) -> Clock:
    """This host's monotonic clock moved onto another's (the orchestrator's, measured by a launcher on other
    machines); itself when there is nothing to move, so a local run's hot path keeps the bare clock."""
    if offset_ns == 0:
        return monotonic_ns
    return lambda: time.monotonic_ns() + offset_ns


class FakeClock:
    """A clock that only moves when told to."""

    def __init__(self, start_ns: int = 0) -> None:
        self.now_ns = start_ns

    def __call__(self) -> int:
        return self.now_ns

    def advance(self, ns: int) -> None:
        self.now_ns += ns

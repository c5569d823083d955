"""Open-loop rate limiting: intended send times handed out on a fixed schedule.

Message i is due at `start + i / rate`, whatever happened before: a stall is never absorbed by rebasing
the schedule, so it shows up as publish_delay (intended -> actual send) instead of hiding in the
latency of the messages that were never sent on time (coordinated omission made visible).
"""

from __future__ import annotations

import time
from typing import Callable

from kafkabench.core.clock import Clock, monotonic_ns

SPIN_BELOW_NS = 1_000_000  # closer than this to a due time, sleeping would overshoot: yield instead


class OpenLoopSchedule:
    def __init__(self, rate_per_s: float, start_ns: int) -> None:
        if rate_per_s <= 0:
            raise ValueError("an open-loop schedule needs a positive rate")
        self.start_ns = start_ns
        self.interval_ns = 1e9 / rate_per_s

    def intended(self, index: int) -> int:
        return self.start_ns + round(index * self.interval_ns)


def wait_until(due_ns: int, clock: Clock = monotonic_ns, sleep: Callable[[float], None] = time.sleep,
               while_waiting: Callable[[], None] = lambda: None) -> int:
    """Return the clock once it reached `due_ns`; `while_waiting` runs between naps (serve callbacks)."""
    while True:
        now = clock()
        gap = due_ns - now
        if gap <= 0:
            return now
        if gap > SPIN_BELOW_NS:
            while_waiting()
            sleep((gap - SPIN_BELOW_NS / 2) / 1e9)
        else:
            sleep(0)

"""Open-loop rate limiting: intended send times handed out on a fixed schedule.

Message i is due at `start + i / rate`, whatever happened before: a stall is never absorbed by rebasing
the schedule, so it shows up as publish_delay (intended -> actual send) instead of hiding in the
latency of the messages that were never sent on time (coordinated omission made visible).
"""

from __future__ import annotations

import time
from typing import Callable

from kafkabench.core.clock import Clock, monotonic_ns

NAP_BELOW_NS = 1_000_000  # closer than this to a due time, a wait would overshoot: the OS's shortest nap instead


class OpenLoopSchedule:
    def __init__(self, rate_per_s: float, start_ns: int) -> None:
        if rate_per_s <= 0:
            raise ValueError("an open-loop schedule needs a positive rate")
        self.start_ns = start_ns
        self.interval_ns = 1e9 / rate_per_s

    def intended(self, index: int) -> int:
        return self.start_ns + round(index * self.interval_ns)


def wait_until(due_ns: int, clock: Clock = monotonic_ns, serve: Callable[[float], None] = time.sleep,
               nap: Callable[[float], None] = time.sleep) -> None:
    """Return once the clock reached `due_ns`, never earlier. Far from it, `serve(seconds)` waits: a client's poll,
    so its callbacks and network I/O go on as they come, not after the wait. Closer than NAP_BELOW_NS, `serve(0)`
    then one nap of what is left, which the OS ends some 50-100 us late (the timer slack; it shows as
    publish_delay). Not `sleep(0)` in a loop: it returns at once, and a producer paced at 2,000/s spent its whole
    time there, a third of a core each (three of them starved this 2-core machine)."""
    while True:
        gap = due_ns - clock()
        if gap <= 0:
            return
        if gap > NAP_BELOW_NS:
            serve((gap - NAP_BELOW_NS / 2) / 1e9)
        else:
            serve(0)
            nap(gap / 1e9)

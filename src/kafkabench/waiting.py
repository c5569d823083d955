"""Bounded waits: every wait in kafkabench has a deadline and says what it was waiting for."""

from __future__ import annotations

import time
from typing import Callable, TypeVar

from kafkabench.errors import WaitTimeout

T = TypeVar("T")


def wait_until(
    condition: Callable[[], T],
    *,
    timeout_s: float,
    what: str,
    hint: str = "",
    interval_s: float = 0.1,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
) -> T:
    """Call `condition` until it returns something truthy and return that; raise WaitTimeout at the deadline.

    `condition` may raise to abort the wait early (a process that died will never become ready).
    """
    deadline = clock() + timeout_s
    while True:
        result = condition()
        if result:
            return result
        if clock() >= deadline:
            message = f"timed out after {timeout_s:g} s waiting for {what}"
            raise WaitTimeout(f"{message}; {hint}" if hint else message)
        sleep(interval_s)

"""Which rate to try next: raise it geometrically until a step fails, then bisect the bracket (geometric middle)
until the highest passing and the lowest failing rate are within the precision. A first step that fails is
followed by lower rates, halving, until one passes. Bounded: at most `max_steps` steps, never above `ceiling`
nor below `floor`; the search says why it stopped.

A step that fails but not clearly is run again at the same rate before the search believes it (with `confirm`,
the default): one pause (a collection, the write-back of what the probe wrote, a neighbour on the machine) fails
any rate for one step, and believed it would bracket the knee below where it is. The rate fails when both runs
fail; a rate that passes once is then confirmed by the lab's hold. A clear failure (step.py says which) is
believed at once: no pause explains it.

Pure bookkeeping: measuring a step and judging it happen elsewhere, so the search is tested on simulated systems.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

FACTOR = 2.0


@dataclass
class RateSearch:
    start: float
    precision: float = 0.05
    max_steps: int = 14
    ceiling: float = math.inf
    floor: float = 1.0
    passed: float | None = None  # the highest rate that passed
    failed: float | None = None  # the lowest rate that failed
    confirm: bool = True
    steps: list[tuple[float, bool]] = field(default_factory=list)
    stop_reason: str = ""
    doubted: float | None = None  # a rate that failed once: the next step runs it again

    def __post_init__(self) -> None:
        if not self.floor <= self.start <= self.ceiling:
            raise ValueError(f"the start rate {self.start:g} is outside {self.floor:g}..{self.ceiling:g}")

    def next_rate(self) -> float | None:
        """The rate of the next step; None once the search is over (stop_reason says why)."""
        if self.stop_reason:
            return None
        if not self.steps:
            return self.start
        if self.doubted is not None:
            return self._within_budget(self.doubted)
        if self.passed is not None and self.failed is not None:
            if self.failed / self.passed <= 1 + self.precision:
                return self._stop(f"bracketed within {self.precision:.0%}: {self.passed:,.0f} passed, "
                                  f"{self.failed:,.0f} failed")
            rate = math.sqrt(self.passed * self.failed)
        elif self.failed is None:  # everything so far passed: higher
            if self.passed >= self.ceiling:
                return self._stop(f"passed at the ceiling, {self.ceiling:,.0f} records/s: the cluster may take more")
            rate = min(self.passed * FACTOR, self.ceiling)
        else:  # everything so far failed: lower
            if self.failed <= self.floor:
                return self._stop(f"failed at the floor, {self.floor:,.0f} records/s")
            rate = max(self.failed / FACTOR, self.floor)
        return self._within_budget(rate)

    def record(self, rate: float, passed: bool, clearly: bool = False) -> None:
        """A step's verdict; `clearly`: it failed by more than one pause explains."""
        self.steps.append((rate, passed))
        if not (passed or clearly) and self.confirm and self.doubted != rate:
            self.doubted = rate
            return
        self.doubted = None
        if passed:
            self.passed = rate if self.passed is None else max(self.passed, rate)
            if self.failed is not None and self.failed <= rate:  # a pass above a failure: the failure was noise
                self.failed = None
        else:
            self.failed = rate if self.failed is None else min(self.failed, rate)
            if self.passed is not None and self.passed >= rate:  # a failure below a pass: the pass was noise
                self.passed = None

    def _within_budget(self, rate: float) -> float | None:
        if len(self.steps) >= self.max_steps:
            return self._stop(f"{self.max_steps} steps (--max-steps) taken")
        return rate

    def _stop(self, reason: str) -> None:
        self.stop_reason = reason
        return None

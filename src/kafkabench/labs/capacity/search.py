"""Which rate to try next: raise it geometrically until a step fails, then bisect the bracket (geometric middle)
until the highest passing and the lowest failing rate are within the precision. A first step that fails is
followed by lower rates, halving, until one passes. Bounded: at most `max_steps` steps, never above `ceiling`
nor below `floor`; the search says why it stopped.

A step that fails but not clearly is run again at the same rate before the search believes it (with `confirm`,
the default): one pause (a collection, the write-back of what the probe wrote, a neighbour on the machine) fails
any rate for one step, and believed it would bracket the knee below where it is. The rate fails when both runs
fail. A rate that failed and then passed its confirm is *unsure*: the search goes on above it as if it passed,
but only a hold may make it the answer. A clear failure (step.py says which) is believed at once: no pause
explains it.

Then the holds (`Holds`): the found rate held for longer, `repeats` times one after the other (each a fresh run, so
the answer held through minutes of the cluster's moods, not one lucky stretch). A hold that fails is believed (half
a minute is many pauses long), and the holds go on down, bisecting between the highest rate below it that passed
cleanly (a step's first run) and the failed hold, until a rate passes all its holds; with no clean pass below,
halving. So a capacity that drifted down between the search and the hold, or a rate a confirm let through, ends
with a held answer below it, not with none.

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
    clean: list[float] = field(default_factory=list)  # rates that passed at their first run
    unsure: list[float] = field(default_factory=list)  # rates that failed, then passed their confirm

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
        confirming, self.doubted = self.doubted == rate, None  # this step ran a doubted rate again
        if passed:
            (self.unsure if confirming else self.clean).append(rate)
            self.passed = rate if self.passed is None else max(self.passed, rate)
            if self.failed is not None and self.failed <= rate:  # a pass above a failure: the failure was noise
                self.failed = None
        else:
            self.failed = rate if self.failed is None else min(self.failed, rate)
            if self.passed is not None and self.passed >= rate:  # a failure below a pass: the pass was noise
                self.passed = None

    @property
    def found_unsure(self) -> bool:
        """The found rate passed only a confirm after failing a step."""
        return self.passed is not None and self.passed not in self.clean

    def _within_budget(self, rate: float) -> float | None:
        if len(self.steps) >= self.max_steps:
            return self._stop(f"{self.max_steps} steps (--max-steps) taken")
        return rate

    def _stop(self, reason: str) -> None:
        self.stop_reason = reason
        return None


@dataclass
class Holds:
    """The holds after the search(es): `candidate` first; after a failed hold, down towards the highest of `clean`
    (rates that passed at their first run) below it, bisecting geometrically, until a rate passes `repeats` holds in a
    row. Bounded: at most `max_holds` failed holds, never below `floor`."""

    candidate: float
    clean: list[float] = field(default_factory=list)
    precision: float = 0.05
    max_holds: int = 14
    floor: float = 1.0
    repeats: int = 1  # holds in a row a rate must pass to be the answer
    held: float | None = None
    failed: list[float] = field(default_factory=list)  # the rates whose hold failed, in order
    passes: list[float] = field(default_factory=list)  # the rate being held, once per hold it passed
    stop_reason: str = ""

    def next_rate(self) -> float | None:
        """The rate of the next hold; None once one rate passed its holds or none can (stop_reason says why)."""
        if self.held is not None or self.stop_reason:
            return None
        if self.passes:
            return self.passes[-1]
        if not self.failed:
            return self.candidate
        if len(self.failed) >= self.max_holds:
            return self._stop(f"{self.max_holds} holds (--max-steps) failed, the last at {self.failed[-1]:,.0f} "
                              "records/s")
        lowest = min(self.failed)
        below = max((rate for rate in self.clean if rate < lowest), default=None)
        if below is None:
            if lowest <= self.floor:
                return self._stop(f"the hold failed at the floor, {self.floor:,.0f} records/s")
            return max(lowest / FACTOR, self.floor)
        if lowest / below <= 1 + self.precision:
            return below
        return math.sqrt(below * lowest)

    def record(self, rate: float, passed: bool) -> None:
        if passed:
            self.passes.append(rate)
            if len(self.passes) >= self.repeats:
                self.held = rate
        else:
            self.passes.clear()
            self.failed.append(rate)

    def _stop(self, reason: str) -> None:
        self.stop_reason = reason
        return None


def median_found(found: list[float]) -> float | None:
    """The searches' answer: the median of the rates they found, the lower middle one of an even count (a rate a
    search found, not a mean of two no step ran); None when none found one."""
    ordered = sorted(found)
    return ordered[(len(ordered) - 1) // 2] if ordered else None

"""The pareto goal's front: the trials no other feasible trial beats on both e2e p99 (lower) and records/s
achieved (higher), and the few of them re-measured against the default at their own rates.

Pure bookkeeping on trial figures, so it is tested without a broker; run.py measures.
"""

from __future__ import annotations

from dataclasses import dataclass

DEFAULT_SHARES = (1 / 16, 1 / 4, 4 / 5)  # of the highest rate: where the default's runs place its own curve
PRESET_SHARE = 0.5


@dataclass(frozen=True)
class Point:
    number: int  # the study's trial
    p99_ms: float
    records_per_s: float  # achieved
    offered: float


def non_dominated(points: list[Point]) -> list[Point]:
    """The front, by records/s rising: no other point is at least as good on both and better on one."""
    def beaten(a: Point) -> bool:
        return any(b.p99_ms <= a.p99_ms and b.records_per_s >= a.records_per_s
                   and (b.p99_ms < a.p99_ms or b.records_per_s > a.records_per_s) for b in points)

    return sorted((p for p in points if not beaten(p)), key=lambda p: p.records_per_s)


def spread(front: list[Point], count: int) -> list[Point]:
    """`count` points along the front, evenly by position, always the fastest: the ones re-measured."""
    if len(front) <= count:
        return list(front)
    last = len(front) - 1
    picked = sorted({round(last - i * last / (count - 1)) for i in range(count)} if count > 1 else {last})
    return [front[i] for i in picked]


def default_rates(high: float, runs: int) -> list[float]:
    """The rates of the default's runs: spread over the range (cycling when there are more runs than shares)."""
    return [round(high * DEFAULT_SHARES[i % len(DEFAULT_SHARES)]) or 1 for i in range(runs)]


def points(trials: list) -> list[Point]:
    """Feasible trials as points: e2e p99 and records/s achieved, at the rate each was offered."""
    return [Point(t.number, t.values[0], t.values[1], t.user_attrs["figures"]["offered"]) for t in trials]

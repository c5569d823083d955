"""The numbers behind every verdict: the relative change of medians, its bootstrap interval, the permutation test
of the difference of medians and its floor, and the Benjamini-Hochberg q-values of a family of tests. Pure
functions of arrays; what they mean for a verdict is report.compare's and report.family's.
"""

from __future__ import annotations

import functools
import itertools
import math
from typing import Sequence

import numpy as np

ALPHA = 0.05
CONFIDENCE = 0.95
RESAMPLES = 10_000
SEED = 20_240_601  # fixed: the same files always give the same interval and p-value
EXACT_LIMIT = 20_000  # label assignments enumerated exactly up to this many (8 vs 8 is 12,870)
MAX_REPEATS = 30  # the search for repeats stops here (a family that needs more asks for a smaller table)


def relative_change(a_median: np.ndarray | float, b_median: np.ndarray | float) -> np.ndarray:
    """(B - A) / |A|; from a zero baseline: 0 when B is zero too, else +-inf (no division by zero)."""
    a, b = np.asarray(a_median, dtype=float), np.asarray(b_median, dtype=float)
    diff = b - a
    fallback = np.where(diff == 0, 0.0, np.copysign(np.inf, diff))
    with np.errstate(over="ignore"):  # a change from a baseline near zero is rightly infinite
        return np.divide(diff, np.abs(a), out=fallback, where=a != 0)


def bootstrap_interval(a: np.ndarray, b: np.ndarray, seed: int = SEED, resamples: int = RESAMPLES,
                       confidence: float = CONFIDENCE) -> tuple[float, float]:
    """Percentile bootstrap of the relative change of medians, each side resampled on its own."""
    rng = np.random.default_rng(seed)
    a_medians = np.median(a[rng.integers(0, len(a), (resamples, len(a)))], axis=1)
    b_medians = np.median(b[rng.integers(0, len(b), (resamples, len(b)))], axis=1)
    tail = (1 - confidence) / 2 * 100
    # no interpolation between resamples: two infinite ones (zero baseline) would give inf - inf = nan
    low, high = np.percentile(relative_change(a_medians, b_medians), [tail, 100 - tail], method="inverted_cdf")
    return float(low), float(high)


def median_interval(values: list[float], seed: int = SEED, resamples: int = RESAMPLES,
                    confidence: float = CONFIDENCE) -> tuple[float, float] | None:
    """Percentile bootstrap of one sample's median (a cell's repeats). None below two values: one value has
    no spread to resample, and any interval drawn around it would be made up. With few values it is wide
    by nature: the median of 3 or 5 resampled repeats is often their lowest or highest."""
    sample = np.asarray(values, dtype=float)
    if len(sample) < 2:
        return None
    rng = np.random.default_rng(seed)
    medians = np.median(sample[rng.integers(0, len(sample), (resamples, len(sample)))], axis=1)
    tail = (1 - confidence) / 2 * 100
    low, high = np.percentile(medians, [tail, 100 - tail], method="inverted_cdf")
    return float(low), float(high)


@functools.lru_cache(maxsize=64)
def _all_assignments(total: int, size: int) -> np.ndarray:
    """Every way to label `size` of `total` pooled samples A: rows of indexes, the A ones first."""
    chosen = np.array(list(itertools.combinations(range(total), size)), dtype=np.intp).reshape(-1, size)
    mask = np.zeros((len(chosen), total), dtype=bool)
    mask[np.arange(len(chosen))[:, None], chosen] = True
    rest = np.nonzero(~mask)[1].reshape(len(chosen), total - size)
    order = np.hstack([chosen, rest])
    order.flags.writeable = False  # shared through the cache
    return order


def _assignments(total: int, size: int, seed: int, resamples: int) -> tuple[np.ndarray, bool]:
    """Label assignments to try, and whether they are all of them (exact) or a seeded random subset."""
    if math.comb(total, size) <= EXACT_LIMIT:
        return _all_assignments(total, size), True
    rng = np.random.default_rng(seed)
    return np.argsort(rng.random((resamples, total)), axis=1), False


def permutation_p(a: np.ndarray, b: np.ndarray, seed: int = SEED, resamples: int = RESAMPLES) -> float:
    """Two-sided p-value of median(B) - median(A) under exchangeable labels."""
    pooled = np.concatenate([a, b])
    observed = abs(float(np.median(b) - np.median(a)))
    order, exact = _assignments(len(pooled), len(a), seed, resamples)
    values = pooled[order]
    stats = np.abs(np.median(values[:, len(a):], axis=1) - np.median(values[:, :len(a)], axis=1))
    # rounding in the medians must not turn a tie into "less extreme"
    extreme = int(np.count_nonzero(stats >= observed * (1 - 1e-9)))
    return extreme / len(stats) if exact else (extreme + 1) / (len(stats) + 1)


@functools.lru_cache(maxsize=256)
def smallest_p(a_n: int, b_n: int) -> float:
    """The p-value of two completely separated samples of these sizes: the lowest this test gives. Not
    1 / assignments: swapping values of A above its median with values of B below its median leaves both
    medians alone, so those labellings tie with the observed one (4 vs 4 cannot go below 4/70)."""
    return permutation_p(np.arange(a_n, dtype=float), np.arange(b_n, dtype=float) + a_n)


def benjamini_hochberg(p_values: Sequence[float]) -> list[float]:
    """q-values, in the order given: q_i = min over ranks k >= rank(i) of p_(k) m / k, capped at 1. Equal p-values
    share their q (the step-up takes the largest rank among them)."""
    p = np.asarray(p_values, dtype=float)
    if not len(p):
        return []
    order = np.argsort(p, kind="stable")
    ranked = p[order] * len(p) / np.arange(1, len(p) + 1)
    q_sorted = np.minimum(np.minimum.accumulate(ranked[::-1])[::-1], 1.0)
    q = np.empty_like(q_sorted)
    q[order] = q_sorted
    return [float(value) for value in q]


def can_decide(a_n: int, b_n: int, family: int, fdr: float = ALPHA) -> bool:
    """Whether a lone change, its two samples completely apart, reaches q < fdr among `family` tests: its q is then
    the test's smallest p times the family's size."""
    return min(a_n, b_n) >= 2 and smallest_p(a_n, b_n) * max(family, 1) < fdr


@functools.lru_cache(maxsize=128)
def repeats_for(family: int, fdr: float = ALPHA) -> int | None:
    """Fewest repeats per side with which a lone change in a family of this size can be called; None beyond
    MAX_REPEATS."""
    return next((n for n in range(2, MAX_REPEATS + 1) if can_decide(n, n, family, fdr)), None)


def repeats_text(family: int, fdr: float = ALPHA) -> str:
    needed = repeats_for(family, fdr)
    return f"{needed}" if needed is not None else f"more than {MAX_REPEATS}"

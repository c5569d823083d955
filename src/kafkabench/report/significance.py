"""The numbers behind every verdict: the relative change of medians, its bootstrap interval, the permutation test
of the difference of medians and its floor, and the Benjamini-Hochberg q-values of a family of tests. A verdict's
median is the Harrell-Davis estimate throughout: a weighted mean of all the order statistics, which moves with every
repeat where the sample median jumps between two of them and ties (benchmarks/verdict_power.py measures the two).
Pure functions of arrays; what they mean for a verdict is report.compare's and report.family's.
"""

from __future__ import annotations

import functools
import itertools
import math
from typing import Callable, Sequence

import numpy as np

ALPHA = 0.05
CONFIDENCE = 0.95
RESAMPLES = 10_000
SEED = 20_240_601  # fixed: the same files always give the same interval and p-value
EXACT_LIMIT = 50_000  # label assignments enumerated exactly up to this many (9 vs 9 is 48,620)
MAX_REPEATS = 30  # the search for repeats stops here (a family that needs more asks for a smaller table)
QUADRATURE_NODES = 64  # Gauss-Legendre nodes per order statistic's slice of the Beta density

Statistic = Callable[[np.ndarray], np.ndarray]  # rows of samples -> one value per row


def relative_change(a_median: np.ndarray | float, b_median: np.ndarray | float) -> np.ndarray:
    """(B - A) / |A|; from a zero baseline: 0 when B is zero too, else +-inf (no division by zero)."""
    a, b = np.asarray(a_median, dtype=float), np.asarray(b_median, dtype=float)
    diff = b - a
    fallback = np.where(diff == 0, 0.0, np.copysign(np.inf, diff))
    with np.errstate(over="ignore"):  # a change from a baseline near zero is rightly infinite
        return np.divide(diff, np.abs(a), out=fallback, where=a != 0)


@functools.lru_cache(maxsize=64)
def harrell_davis_weights(n: int) -> np.ndarray:
    """The weight of each order statistic in the Harrell-Davis median of n values: the mass of the Beta((n+1)/2,
    (n+1)/2) density on ((i-1)/n, i/n], integrated by Gauss-Legendre quadrature on each slice and scaled to sum
    to 1 (the density is a polynomial for odd n, so exact there; a square root at the ends for even n)."""
    shape = (n + 1) / 2
    nodes, node_weights = np.polynomial.legendre.leggauss(QUADRATURE_NODES)
    low = np.arange(n)[:, None] / n
    x = low + (nodes + 1) / (2 * n)  # each row: the nodes mapped into its slice
    mass = (x * (1 - x)) ** (shape - 1) @ node_weights
    weights = mass / mass.sum()
    weights.flags.writeable = False  # shared through the cache
    return weights


def harrell_davis(samples: np.ndarray) -> np.ndarray:
    """The Harrell-Davis estimate of the median of each row: a weighted mean of all its order statistics, the
    middle ones weighted most. Unlike the sample median it moves with every value, so repeats that repeat a
    resolution (whole milliseconds: 3, 3, 3, 4, 4) still tell one side from the other."""
    ordered = np.sort(samples, axis=-1)
    return ordered @ harrell_davis_weights(ordered.shape[-1])


def sample_median(samples: np.ndarray) -> np.ndarray:
    return np.median(samples, axis=-1)


def bootstrap_interval(a: np.ndarray, b: np.ndarray, seed: int = SEED, resamples: int = RESAMPLES,
                       confidence: float = CONFIDENCE, statistic: Statistic = harrell_davis) -> tuple[float, float]:
    """Percentile bootstrap of the relative change of medians, each side resampled on its own."""
    rng = np.random.default_rng(seed)
    a_medians = statistic(a[rng.integers(0, len(a), (resamples, len(a)))])
    b_medians = statistic(b[rng.integers(0, len(b), (resamples, len(b)))])
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


def permutation_p(a: np.ndarray, b: np.ndarray, seed: int = SEED, resamples: int = RESAMPLES,
                  statistic: Statistic = harrell_davis) -> float:
    """Two-sided p-value of median(B) - median(A) under exchangeable labels."""
    pooled = np.concatenate([a, b])
    observed = abs(float(statistic(b[None])[0] - statistic(a[None])[0]))
    order, exact = _assignments(len(pooled), len(a), seed, resamples)
    values = pooled[order]
    stats = np.abs(statistic(values[:, len(a):]) - statistic(values[:, :len(a)]))
    # rounding in the weighted sums must not turn a tie into "less extreme"
    extreme = int(np.count_nonzero(stats >= observed * (1 - 1e-9)))
    return extreme / len(stats) if exact else (extreme + 1) / (len(stats) + 1)


@functools.lru_cache(maxsize=256)
def smallest_p(a_n: int, b_n: int, statistic: Statistic = harrell_davis) -> float:
    """The p-value of two completely separated samples of these sizes: the lowest this test gives. For the
    Harrell-Davis median, whose every weight is positive, only the observed labelling and (at equal sizes) its
    mirror are as extreme: 2 / C(2n, n), 0.0079 at 5 vs 5. The sample median's floor is higher: swapping values
    of A above its median with values of B below its own leaves both medians alone (0.048 at 5 vs 5)."""
    return permutation_p(np.arange(a_n, dtype=float), np.arange(b_n, dtype=float) + a_n, statistic=statistic)


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

"""A step's figures from its progress windows, and how sure each is.

- A percentile is read from the measured windows' histograms merged bucket for bucket (never averaged). Its
  95 % interval is a bootstrap over windows: windows are drawn with replacement, their histograms summed, the
  percentile read again. Latencies next to each other in time are alike (a GC pause, a full batch); resampling
  whole windows keeps that, where resampling single records would make the interval too narrow.
- A slope (least squares) with its 95 % interval says whether something grows over the measured windows: the
  capacity lab's consumer lag (step.py).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from kafkabench.core.histogram import LatencyHistogram

CONFIDENCE = 0.95
RESAMPLES = 2000
SEED = 20261126
# Student's t at 97.5 % for 1..30 degrees of freedom; beyond, the normal's 1.96 is within 2 %
_T975 = (12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145, 2.131,
         2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042)


@dataclass(frozen=True)
class Interval:
    value: float
    low: float
    high: float

    def as_list(self) -> list[float]:
        return [self.value, self.low, self.high]


def percentile_interval(windows: list[LatencyHistogram], percentile: float, resamples: int = RESAMPLES,
                        seed: int = SEED) -> Interval | None:
    """The percentile (ms) of all windows together and its bootstrap interval over windows; None without values.
    One window with values: an interval of width 0 (nothing to resample)."""
    values_us, counts = _count_matrix([w for w in windows if w.count])
    if counts.shape[0] == 0:
        return None
    value = float(_percentile_us(values_us, counts.sum(axis=0, keepdims=True), percentile)[0]) / 1000
    if counts.shape[0] == 1:
        return Interval(value, value, value)
    rng = np.random.default_rng(seed)
    weights = rng.multinomial(counts.shape[0], np.full(counts.shape[0], 1 / counts.shape[0]), size=resamples)
    return _interval(value, _percentile_us(values_us, weights @ counts, percentile) / 1000)


def record_interval(histogram: LatencyHistogram, percentile: float, resamples: int = RESAMPLES,
                    seed: int = SEED) -> Interval | None:
    """The percentile (ms) and its bootstrap interval over single records: for records that each had the system to
    themselves (sent one at a time, the next once the last was read), so no two share a pause or a batch."""
    values_us, counts = _count_matrix([histogram] if histogram.count else [])
    if counts.shape[0] == 0:
        return None
    value = float(_percentile_us(values_us, counts, percentile)[0]) / 1000
    rng = np.random.default_rng(seed)
    total = int(counts.sum())
    return _interval(value, _percentile_us(values_us, rng.multinomial(total, counts[0] / total, size=resamples),
                                           percentile) / 1000)


def _interval(value: float, drawn: np.ndarray) -> Interval:
    """The value with the CONFIDENCE interval of its bootstrap draws (the draws themselves at both ends)."""
    tail = (1 - CONFIDENCE) / 2 * 100
    return Interval(value, float(np.percentile(drawn, tail, method="lower")),
                    float(np.percentile(drawn, 100 - tail, method="higher")))


def _count_matrix(windows: list[LatencyHistogram]) -> tuple[np.ndarray, np.ndarray]:
    """Every recorded bucket's value (us, ascending) and a windows x buckets matrix of counts."""
    if not windows:
        return np.zeros(0, np.int64), np.zeros((0, 0), np.int64)
    buckets = [window.buckets() for window in windows]
    indexes = np.unique(np.concatenate([window_indexes for window_indexes, _counts in buckets]))
    counts = np.zeros((len(windows), len(indexes)), dtype=np.int64)
    for row, (window_indexes, window_counts) in enumerate(buckets):
        counts[row, np.searchsorted(indexes, window_indexes)] = window_counts
    return windows[0].bucket_values(indexes), counts


def _percentile_us(values_us: np.ndarray, counts: np.ndarray, percentile: float) -> np.ndarray:
    """Per row of counts, the value at the percentile as HdrHistogram reads it: the bucket holding record number
    max(1, round(total x percentile / 100))."""
    cumulative = np.cumsum(counts, axis=1)
    totals = cumulative[:, -1]
    ranks = np.maximum(1, np.floor(totals * percentile / 100 + 0.5)).astype(np.int64)
    index = (cumulative < ranks[:, None]).sum(axis=1)  # the first bucket whose cumulative count reaches the rank
    return values_us[index].astype(float)


def slope_interval(times_s: list[float], values: list[float]) -> Interval | None:
    """Least-squares slope of values over time with its 95 % interval (Student's t); None under 3 points."""
    n = len(times_s)
    if n < 3:
        return None
    t, y = np.asarray(times_s, dtype=float), np.asarray(values, dtype=float)
    spread = np.sum((t - t.mean()) ** 2)
    if spread == 0:
        return None
    slope = float(np.sum((t - t.mean()) * (y - y.mean())) / spread)
    residuals = y - (y.mean() + slope * (t - t.mean()))
    error = math.sqrt(float(np.sum(residuals ** 2)) / (n - 2) / spread)
    half = (_T975[n - 3] if n - 2 <= len(_T975) else 1.96) * error
    return Interval(slope, slope - half, slope + half)

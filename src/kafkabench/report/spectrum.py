"""The percentile spectrum of a latency histogram, HdrHistogram style: the latency reached at every
percentile, for a plot whose x axis is 1/(1 - percentile) on a log scale.

Built from the histogram's recorded values, not from a handful of percentile levels, so the tail is all
there: every bucket is a step (from the percentile where its values start, at its value), the last step is
the maximum. Steps closer than about 0.7 % (in log x and log y) to the one kept before are merged so a
million-record run stays a few hundred points, but the steps that hold p50, p90, p99, p99.9, p99.99 and the
maximum are always kept: the curve passes through the exact numbers of `stats`.
"""

from __future__ import annotations

import math

from kafkabench.core.histogram import LatencyHistogram

# the levels result files report (Stat) and the extra tail levels a big run reaches
KEPT_LEVELS = (50.0, 90.0, 99.0, 99.9, 99.99, 99.999)
MERGE_LOG10 = 0.003  # about 0.7 %: far below what a log-log plot shows


def _target_counts(total: int) -> set[int]:
    """The counts HdrHistogram's get_value_at_percentile looks for at each kept level."""
    return {max(int(level / 100 * total + 0.5), 1) for level in KEPT_LEVELS}


def _far_enough(x: float, y: float, last: tuple[float, float]) -> bool:
    return abs(math.log10(x) - math.log10(last[0])) >= MERGE_LOG10 or \
        abs(math.log10(y) - math.log10(last[1])) >= MERGE_LOG10


def percentile_spectrum(histogram: LatencyHistogram) -> dict[str, list[float]]:
    """{"percentile": [...], "value_ms": [...]}: each point starts a step (draw with line shape "hv")."""
    total = histogram.count
    if total == 0:
        return {"percentile": [], "value_ms": []}
    targets = sorted(_target_counts(total))
    steps = histogram.recorded_steps()
    percentiles: list[float] = []
    values: list[float] = []
    last: tuple[float, float] | None = None
    for index, (below, upto, value_us) in enumerate(steps):
        percentile = below / total * 100
        x, y = axis_position(percentile), max(value_us, 1) / 1000
        holds_level = any(below < target <= upto for target in targets)
        if last is None or index == len(steps) - 1 or holds_level or _far_enough(x, y, last):
            percentiles.append(round(percentile, 9))
            values.append(value_us / 1000)
            last = (x, y)
    return {"percentile": percentiles, "value_ms": values}


def axis_position(percentile: float) -> float:
    """Where a percentile sits on the spectrum's x axis: 1/(1 - p), so 50 % -> 2, 99 % -> 100, 99.9 % -> 1000."""
    return 100 / (100 - percentile)

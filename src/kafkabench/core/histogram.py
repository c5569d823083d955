"""Latency histograms: HdrHistogram in microseconds, 1 us .. 1 h, 3 significant digits.

Hot paths collect raw values into arrays and fold them in bulk (`record_many_us`): every value counted in
its bucket exactly as one-by-one recording would, at numpy speed instead of a Python call per value.

They travel between processes encoded (HdrHistogram V2 compressed, base64), the same encoding Java's
HdrHistogram writes, and are merged before any percentile is read: percentiles are never averaged.
A value outside the range is counted in `out_of_range`, never dropped silently; of those, the values below zero
also in `negative` (an e2e latency read on two hosts' clocks can come out below zero: it is counted, never clamped).
"""

from __future__ import annotations

import numpy as np
from hdrh.histogram import HdrHistogram
from pydantic import BaseModel

LOWEST_US = 1
HIGHEST_US = 3_600_000_000
SIGNIFICANT_DIGITS = 3


class Stat(BaseModel):
    """One metric's summary, as result files carry it (`runs[i].stats.<metric>`)."""

    count: int
    mean_ms: float
    p50_ms: float
    p90_ms: float
    p99_ms: float
    p999_ms: float
    max_ms: float
    min_ms: float


class LatencyHistogram:
    def __init__(self, histogram: HdrHistogram | None = None, out_of_range: int = 0) -> None:
        self._hdr = histogram or HdrHistogram(LOWEST_US, HIGHEST_US, SIGNIFICANT_DIGITS)
        self.out_of_range = out_of_range
        self.negative = 0  # of out_of_range

    def record_ns(self, nanoseconds: int) -> bool:
        """Record one latency; False (and counted) if it cannot be represented."""
        micros = (nanoseconds + 500) // 1000
        if micros < 0 or micros > HIGHEST_US or not self._hdr.record_value(micros):
            self.out_of_range += 1
            self.negative += micros < 0
            return False
        return True

    def record_many_us(self, micros: np.ndarray) -> int:
        """Record many latencies in microseconds at once; return how many were out of range (and counted).

        Each value's bucket index is computed as HdrHistogram computes it, the counts per bucket summed with
        bincount and added to the counts array in one piece, the total, minimum and maximum moved as recording
        each non-empty bucket once at its lowest equivalent value would: the same histogram as recording the
        values one by one, without a Python call per bucket (at 1,000 records/s nearly every value has one)."""
        micros = np.asarray(micros, dtype=np.int64)
        fits = (micros >= 0) & (micros <= HIGHEST_US)
        outside = int(micros.size - np.count_nonzero(fits))
        self.out_of_range += outside
        if outside:
            self.negative += int(np.count_nonzero(micros < 0))
            micros = micros[fits]
        if micros.size:
            hdr = self._hdr
            counts = np.bincount(_counts_indexes(hdr, micros))
            array = np.ctypeslib.as_array(hdr.counts)
            array[:counts.size] += counts.astype(array.dtype)
            hdr.total_count += int(micros.size)
            recorded = np.flatnonzero(counts)
            hdr.min_value = min(hdr.min_value, hdr.get_value_from_index(int(recorded[0])))
            hdr.max_value = max(hdr.max_value, hdr.get_value_from_index(int(recorded[-1])))
        return outside

    @property
    def count(self) -> int:
        return self._hdr.get_total_count()

    def merge(self, other: LatencyHistogram) -> None:
        self._hdr.add(other._hdr)
        self.out_of_range += other.out_of_range
        self.negative += other.negative

    def encode(self) -> str:
        return self._hdr.encode().decode("ascii")

    @classmethod
    def decode(cls, encoded: str, out_of_range: int = 0) -> LatencyHistogram:
        return cls(HdrHistogram.decode(encoded), out_of_range)

    def value_at_percentile_ms(self, percentile: float) -> float:
        return self.percentiles_ms(percentile)[0]

    def percentiles_ms(self, *percentiles: float) -> list[float]:
        """Exactly what HdrHistogram's get_value_at_percentile gives for each, read from the recorded buckets alone:
        its loop walks the counts array in Python (a few ms a value; a run's timeline and a plan's report read
        thousands)."""
        return self._percentiles_ms(*self.buckets(), percentiles)

    def _percentiles_ms(self, indexes: np.ndarray, counts: np.ndarray, percentiles) -> list[float]:
        hdr = self._hdr
        reached = np.cumsum(counts)
        values = []
        for percentile in percentiles:
            bucket = int(np.searchsorted(reached, hdr.get_target_count_at_percentile(percentile)))
            if bucket == len(indexes):  # nothing recorded
                values.append(0.0)
                continue
            value = hdr.get_value_from_index(int(indexes[bucket]))
            edge = hdr.get_highest_equivalent_value if percentile else hdr.get_lowest_equivalent_value
            values.append(edge(value) / 1000)
        return values

    def summary(self) -> Stat | None:
        if self.count == 0:
            return None
        hdr = self._hdr
        indexes, counts = self.buckets()
        # hdrh's get_mean_value, read from the recorded buckets: Python integers, one division, as it does
        total = sum(int(count) * hdr._hdr_median_equiv_value(hdr.get_value_from_index(int(index)))
                    for index, count in zip(indexes, counts))
        p50, p90, p99, p999 = self._percentiles_ms(indexes, counts, (50, 90, 99, 99.9))
        return Stat(count=self.count, mean_ms=float(total) / hdr.get_total_count() / 1000, p50_ms=p50, p90_ms=p90,
                    p99_ms=p99, p999_ms=p999, max_ms=hdr.get_max_value() / 1000, min_ms=hdr.get_min_value() / 1000)

    def buckets(self) -> tuple[np.ndarray, np.ndarray]:
        """(index, count) of every recorded bucket, ascending, as arrays: the counts array read in one piece, for
        code that sums many histograms bucket for bucket (bucket_values gives the indexes' values). The array is read
        up to the maximum's bucket: nothing is recorded beyond it (hdrh keeps the maximum through records, adds and
        decodes)."""
        hdr = self._hdr
        counts = np.ctypeslib.as_array(hdr.counts)[:hdr.get_counts_array_index(hdr.get_max_value()) + 1]
        indexes = np.flatnonzero(counts)
        return indexes, counts[indexes].astype(np.int64)

    def bucket_values(self, indexes: np.ndarray) -> np.ndarray:
        """The highest value (us) each bucket index stands for, as percentiles read it; the same for every
        histogram (they share one layout)."""
        hdr = self._hdr
        return np.asarray([hdr.get_highest_equivalent_value(hdr.get_value_from_index(int(i))) for i in indexes],
                          dtype=np.int64)

    def recorded_steps(self) -> list[tuple[int, int, int]]:
        """(count below, count up to and including, value in us) of every recorded bucket, ascending: the
        steps of hdr.get_recorded_iterator(), read bucket by bucket up to the maximum, about seven times
        faster than that iterator (a plan's report draws hundreds of histograms)."""
        hdr, steps, below = self._hdr, [], 0
        for index in range(hdr.get_counts_array_index(hdr.get_max_value()) + 1):
            count = hdr.get_count_at_index(index)
            if count:
                steps.append((below, below + count, hdr.get_highest_equivalent_value(hdr.get_value_from_index(index))))
                below += count
        return steps


def _counts_indexes(hdr: HdrHistogram, values: np.ndarray) -> np.ndarray:
    """HdrHistogram's counts-array index of each value (its _counts_index_for, vectorised). The bucket is
    the power of two above the value (at least the sub-bucket range), read exactly from frexp's exponent."""
    _mantissa, bits = np.frexp((values | hdr.sub_bucket_mask).astype(np.float64))  # bits = bit length, exact below 2**53
    bucket = bits.astype(np.int64) - hdr.unit_magnitude - (hdr.sub_bucket_half_count_magnitude + 1)
    sub_bucket = values >> (bucket + hdr.unit_magnitude)
    return ((bucket + 1) << hdr.sub_bucket_half_count_magnitude) + sub_bucket - hdr.sub_bucket_half_count

"""Per-interval statistics of a worker. Latencies are collected raw on the hot path (a list append, or an
array per batch) and folded into the window's histogram in bulk when the window closes; every interval the
window is handed out (for progress lines and the timeline), folded into the run's total, and starts anew.

Not thread-safe, on purpose: the run's own thread owns it. Clients that acknowledge on another thread hand
their values over through an AckLog (workers.acks), never by locking per record."""

from __future__ import annotations

import numpy as np

from kafkabench.core.clock import Clock
from kafkabench.core.histogram import LatencyHistogram
from kafkabench.core.protocol import Window

FOLD_AT = 1 << 16  # values held raw before they are folded into the open window's histogram (memory stays flat)


def ns_to_us(nanoseconds) -> np.ndarray:
    """Nanoseconds to the histogram's microseconds, rounded as LatencyHistogram.record_ns rounds."""
    return (np.asarray(nanoseconds, dtype=np.int64) + 500) // 1000


class WindowedStats:
    def __init__(self, metrics: tuple[str, ...], interval_s: float, clock: Clock, start_ns: int) -> None:
        self.total = {metric: LatencyHistogram() for metric in metrics}
        self.records = 0
        self.payload_bytes = 0
        self.errors = 0
        self._metrics = metrics
        self._interval_ns = int(interval_s * 1e9)
        self._clock = clock
        self._index = 0
        self._open(start_ns)

    def _open(self, start_ns: int) -> None:
        self._window = {metric: LatencyHistogram() for metric in self._metrics}
        self._pending: dict[str, list[np.ndarray]] = {metric: [] for metric in self._metrics}
        self._single_ns: dict[str, list[int]] = {metric: [] for metric in self._metrics}
        self._held = 0
        self._window_start = start_ns
        self._window_records = self._window_bytes = self._window_errors = 0

    def record(self, metric: str, nanoseconds: int) -> None:
        """One value, folded in with the next bulk."""
        self._single_ns[metric].append(nanoseconds)

    def add_us(self, metric: str, micros: np.ndarray) -> None:
        """Many values in microseconds (int64), folded into the window's histogram in bulk."""
        if len(micros):
            self._pending[metric].append(micros)
            self._held += len(micros)
            if self._held >= FOLD_AT:
                self._fold_pending()

    def count(self, records: int = 0, payload_bytes: int = 0, errors: int = 0) -> None:
        self.records += records
        self.payload_bytes += payload_bytes
        self.errors += errors
        self._window_records += records
        self._window_bytes += payload_bytes
        self._window_errors += errors

    def due(self, now: int | None = None) -> bool:
        """Whether the interval of the open window is over."""
        return (self._clock() if now is None else now) - self._window_start >= self._interval_ns

    def close_window(self, now: int | None = None) -> Window:
        now = self._clock() if now is None else now
        self._fold_pending()
        window = Window(index=self._index, start_ns=self._window_start, end_ns=now, records=self._window_records,
                        payload_bytes=self._window_bytes, errors=self._window_errors,
                        histograms={metric: h.encode() for metric, h in self._window.items()})
        self._fold_into_total()
        self._index += 1
        self._open(now)
        return window

    def fold(self) -> None:
        """Fold the open window into the total without handing it out (a run that ends on an error)."""
        self._fold_pending()
        self._fold_into_total()
        self._open(self._clock())

    def _fold_pending(self) -> None:
        for metric in self._metrics:
            arrays = self._pending[metric]
            if self._single_ns[metric]:
                arrays.append(ns_to_us(self._single_ns[metric]))
                self._single_ns[metric] = []
            if arrays:
                self._window[metric].record_many_us(np.concatenate(arrays))
                self._pending[metric] = []
        self._held = 0

    def _fold_into_total(self) -> None:
        for metric, histogram in self._window.items():
            self.total[metric].merge(histogram)

    @property
    def out_of_range(self) -> int:
        """Values that could not be represented, in every closed window (the open one counts when it closes)."""
        return sum(h.out_of_range for h in self.total.values())

    @property
    def negative(self) -> int:
        """Of out_of_range, the values below zero."""
        return sum(h.negative for h in self.total.values())

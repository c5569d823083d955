"""The progress windows of every worker of one role, merged by index into one timeline of typed entries.

A timeline is bounded so that a run of any length (a day of 1 s windows) can keep it: past `max_entries`,
the adjacent pair of entries covering the fewest windows (the oldest such pair) becomes one entry. So the
resolution coarsens evenly, entries' spans differing by about a factor of three at most, at the cost of
one merge per new entry rather than a pause to halve the whole list while workers wait to be relayed.
Nothing is lost: records, bytes and errors are summed, rates taken over the merged span, percentiles read
from the merged histograms, never averaged.

Merging exactly is why every entry keeps its encoded histograms (each metric the windows carry). The first
`warmup_windows` window indexes are the warm-up: their entries say `phase: "warmup"` and never merge with the
measured ones, so the measured phase's figures come from its entries alone (`phase_histograms`).

Memory is therefore `max_entries` encoded
histograms, whose size grows with the number of distinct buckets they use: about 6 KB for 100,000
latencies spread around 3 ms, 64 KB at the very worst (all 23,552 buckets from 1 us to 1 h in use). The
default 2,000 entries hold some 10 to 20 MB per role in practice, at most about 130 MB.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, PrivateAttr

from kafkabench.core.histogram import LatencyHistogram
from kafkabench.core.merge import MB
from kafkabench.core.protocol import Window


@dataclass(frozen=True)
class _Totals:
    """What an entry covers, in the units that add up exactly when two entries merge."""

    start_ns: int
    end_ns: int
    records: int
    payload_bytes: int
    errors: int

    def __add__(self, other: _Totals) -> _Totals:
        return _Totals(min(self.start_ns, other.start_ns), max(self.end_ns, other.end_ns), self.records + other.records,
                       self.payload_bytes + other.payload_bytes, self.errors + other.errors)


class TimelineEntry(BaseModel):
    """One point of `runs[i].timeline`: `model_dump()` is what result files keep; the private state is only
    there to merge entries exactly and never reaches a file. Frozen, as listeners and the timeline share it."""

    model_config = ConfigDict(frozen=True)

    t_s: float  # from the start of the role's first window to the end of this entry
    records: int
    records_per_s: float
    mb_per_s: float
    errors: int
    metric: str
    p50_ms: float | None
    p99_ms: float | None
    phase: str | None = None  # "warmup": within the run's warm-up, kept out of its figures
    _totals: _Totals = PrivateAttr()
    _histograms: dict[str, str] = PrivateAttr(default_factory=dict)  # metric -> LatencyHistogram.encode(), if recorded

    @property
    def start_ns(self) -> int:
        return self._totals.start_ns

    @property
    def end_ns(self) -> int:
        return self._totals.end_ns

    @property
    def payload_bytes(self) -> int:
        return self._totals.payload_bytes

    def histogram(self, metric: str | None = None) -> LatencyHistogram:
        """The entry's latencies of `metric` (default: the timeline's), exactly (empty when none were recorded)."""
        return _decoded(self._histograms.get(metric or self.metric, ""))

    def histograms(self) -> dict[str, LatencyHistogram]:
        return {metric: _decoded(encoded) for metric, encoded in self._histograms.items()}


class Timeline:
    """Windows of every worker of a role, merged by index once every worker still running has sent it."""

    def __init__(self, workers: list[str], metric: str, max_entries: int = 2000, warmup_windows: int = 0) -> None:
        if max_entries < 1:
            raise ValueError(f"a timeline keeps at least one entry, not {max_entries}")
        self._latest = {worker: -1 for worker in workers}
        self._windows: dict[int, list[Window]] = defaultdict(list)
        self._metric = metric
        self._warmup_windows = warmup_windows
        self._max_entries = max_entries
        self._emitted = -1
        self._origin_ns: int | None = None
        self.entries: list[TimelineEntry] = []
        self._widths: list[int] = []  # how many window indexes each entry covers

    def add(self, worker: str, window: Window) -> list[TimelineEntry]:
        """The entries this window completes (each of one window index, whatever the timeline keeps)."""
        self._windows[window.index].append(window)
        self._latest[worker] = window.index
        return self._ready()

    def finished(self, worker: str) -> list[TimelineEntry]:
        """The entries that waited only for this worker, which will send no more windows."""
        self._latest.pop(worker, None)
        return self._ready()

    def as_dicts(self) -> list[dict[str, Any]]:
        return [entry.model_dump(exclude=None if entry.phase else {"phase"}) for entry in self.entries]

    def phase_entries(self, phase: str | None) -> list[TimelineEntry]:
        """The entries of the warm-up ("warmup") or of the measured phase (None)."""
        return [entry for entry in self.entries if entry.phase == phase]

    def _ready(self) -> list[TimelineEntry]:
        upto = min(self._latest.values()) if self._latest else max(self._windows, default=-1)
        fresh = []
        while self._emitted < upto:
            self._emitted += 1
            windows = self._windows.pop(self._emitted, [])
            if windows:
                self._origin_ns = min(w.start_ns for w in windows) if self._origin_ns is None else self._origin_ns
                phase = "warmup" if self._emitted < self._warmup_windows else None
                fresh.append(_window_entry(windows, self._metric, self._origin_ns, phase))
        for entry in fresh:
            self._keep(entry)
        return fresh

    def _keep(self, entry: TimelineEntry) -> None:
        self.entries.append(entry)
        self._widths.append(1)
        if len(self.entries) > self._max_entries:
            widths = self._widths
            entries = self.entries
            pairs = [i for i in range(len(widths) - 1) if entries[i].phase == entries[i + 1].phase]
            if not pairs:
                return
            first = min(pairs, key=lambda i: widths[i] + widths[i + 1])  # the oldest of ties
            self.entries[first:first + 2] = [combined(self.entries[first], self.entries[first + 1])]
            widths[first:first + 2] = [widths[first] + widths[first + 1]]


def _window_entry(windows: list[Window], metric: str, origin_ns: int, phase: str | None) -> TimelineEntry:
    histograms: dict[str, LatencyHistogram] = {}
    for window in windows:
        for name, encoded in window.histograms.items():
            _merge_into(histograms, name, LatencyHistogram.decode(encoded))
    totals = _Totals(min(w.start_ns for w in windows), max(w.end_ns for w in windows), sum(w.records for w in windows),
                     sum(w.payload_bytes for w in windows), sum(w.errors for w in windows))
    return _entry(metric, round((totals.end_ns - origin_ns) / 1e9, 3), totals, histograms, phase)


def combined(earlier: TimelineEntry, later: TimelineEntry) -> TimelineEntry:
    """One entry covering both, merged exactly."""
    histograms = earlier.histograms()
    for name, histogram in later.histograms().items():
        _merge_into(histograms, name, histogram)
    return _entry(later.metric, later.t_s, earlier._totals + later._totals, histograms, later.phase)


def _merge_into(histograms: dict[str, LatencyHistogram], metric: str, histogram: LatencyHistogram) -> None:
    if metric in histograms:
        histograms[metric].merge(histogram)
    else:
        histograms[metric] = histogram


def phase_histograms(entries: list[TimelineEntry]) -> dict[str, LatencyHistogram]:
    """Every metric's latencies over `entries`, merged exactly."""
    merged: dict[str, LatencyHistogram] = {}
    for entry in entries:
        for metric, histogram in entry.histograms().items():
            _merge_into(merged, metric, histogram)
    return merged


def _entry(metric: str, t_s: float, totals: _Totals, histograms: dict[str, LatencyHistogram],
           phase: str | None) -> TimelineEntry:
    seconds = max((totals.end_ns - totals.start_ns) / 1e9, 1e-9)
    histogram = histograms.get(metric) or LatencyHistogram()
    recorded = histogram.count > 0
    p50_ms, p99_ms = histogram.percentiles_ms(50, 99) if recorded else (None, None)
    entry = TimelineEntry(
        t_s=t_s,
        records=totals.records,
        records_per_s=totals.records / seconds,
        mb_per_s=totals.payload_bytes / MB / seconds,
        errors=totals.errors,
        metric=metric,
        p50_ms=p50_ms,
        p99_ms=p99_ms,
        phase=phase,
    )
    entry._totals = totals
    entry._histograms = {name: h.encode() for name, h in histograms.items() if h.count > 0}
    return entry


def _decoded(encoded: str) -> LatencyHistogram:
    return LatencyHistogram.decode(encoded) if encoded else LatencyHistogram()

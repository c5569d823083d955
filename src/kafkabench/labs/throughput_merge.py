"""Several workers of one role (N producers, M consumers) become one run: histograms merged (never
percentiles averaged), counters summed, wall time from the first worker's start to the last one's end, and
the progress windows of all workers merged by index into one timeline."""

from __future__ import annotations

from collections import defaultdict

from kafkabench.core.histogram import LatencyHistogram
from kafkabench.core.protocol import Outcome, Window

MB = 1024 * 1024  # MB/s as Apache's perf tools count it, so the two can be read side by side


def merge_histograms(outcomes: list[Outcome]) -> dict[str, LatencyHistogram]:
    merged: dict[str, LatencyHistogram] = {}
    for outcome in outcomes:
        for metric, blob in outcome.histograms.items():
            merged.setdefault(metric, LatencyHistogram()).merge(LatencyHistogram.decode(blob))
    return {metric: h for metric, h in merged.items() if h.count}


def sum_counters(outcomes: list[Outcome]) -> dict[str, int]:
    total: dict[str, int] = defaultdict(int)
    for outcome in outcomes:
        for key, value in outcome.counters.items():
            total[key] += value
    return dict(total)


def wall_span(outcomes: list[Outcome]) -> tuple[int | None, int | None]:
    starts = [o.start_ns for o in outcomes if o.start_ns is not None]
    ends = [o.end_ns for o in outcomes if o.end_ns is not None]
    return (min(starts) if starts else None, max(ends) if ends else None)


def resources(outcomes: list[Outcome]) -> dict[str, float]:
    cpu = [o.resources["cpu_s"] for o in outcomes if "cpu_s" in o.resources]
    rss = [o.resources["max_rss_mb"] for o in outcomes if "max_rss_mb" in o.resources]
    return {"cpu_s": round(sum(cpu), 6), "max_rss_mb": max(rss)} if cpu else {}


def throughput(records: int, payload_bytes: int, start_ns: int | None, end_ns: int | None) -> dict[str, float]:
    if start_ns is None or end_ns is None or end_ns <= start_ns:
        return {}
    seconds = (end_ns - start_ns) / 1e9
    return {"records_per_s": records / seconds, "payload_mb_per_s": payload_bytes / MB / seconds}


class Timeline:
    """Windows of every worker of a role, merged by index once every worker still running has sent it."""

    def __init__(self, workers: list[str], metric: str) -> None:
        self._latest = {worker: -1 for worker in workers}
        self._windows: dict[int, list[Window]] = defaultdict(list)
        self._metric = metric
        self._emitted = -1
        self._origin_ns: int | None = None
        self.entries: list[dict] = []

    def add(self, worker: str, window: Window) -> list[dict]:
        self._windows[window.index].append(window)
        self._latest[worker] = window.index
        return self._ready()

    def finished(self, worker: str) -> list[dict]:
        self._latest.pop(worker, None)
        return self._ready()

    def _ready(self) -> list[dict]:
        upto = min(self._latest.values()) if self._latest else max(self._windows, default=-1)
        fresh = []
        while self._emitted < upto:
            self._emitted += 1
            windows = self._windows.pop(self._emitted, [])
            if windows:
                fresh.append(self._entry(windows))
        self.entries.extend(fresh)
        return fresh

    def _entry(self, windows: list[Window]) -> dict:
        start = min(w.start_ns for w in windows)
        end = max(w.end_ns for w in windows)
        self._origin_ns = self._origin_ns if self._origin_ns is not None else start
        seconds = max((end - start) / 1e9, 1e-9)
        records = sum(w.records for w in windows)
        histogram = LatencyHistogram()
        for window in windows:
            if self._metric in window.histograms:
                histogram.merge(LatencyHistogram.decode(window.histograms[self._metric]))
        summary = histogram.summary()
        return {
            "t_s": round((end - self._origin_ns) / 1e9, 3),
            "records": records,
            "records_per_s": records / seconds,
            "mb_per_s": sum(w.payload_bytes for w in windows) / MB / seconds,
            "errors": sum(w.errors for w in windows),
            "metric": self._metric,
            "p50_ms": summary.p50_ms if summary else None,
            "p99_ms": summary.p99_ms if summary else None,
        }

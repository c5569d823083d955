"""Several workers of one role (N producers, M consumers) become one run: histograms merged (never
percentiles averaged), counters summed, wall time from the first worker's start to the last one's end."""

from __future__ import annotations

from collections import defaultdict

from kafkabench.core.histogram import LatencyHistogram
from kafkabench.core.protocol import Outcome

MB = 1024 * 1024  # MB/s as Apache's perf tools count it, so the two can be read side by side


def merge_histograms(outcomes: list[Outcome]) -> dict[str, LatencyHistogram]:
    merged: dict[str, LatencyHistogram] = {}
    for outcome in outcomes:
        for metric, blob in outcome.histograms.items():
            merged.setdefault(metric, LatencyHistogram()).merge(LatencyHistogram.decode(blob))
    return {metric: h for metric, h in merged.items() if h.count}


WHOLE_ONLY = ("wire_bytes",)  # read against payload_bytes: a sum over some workers would read as a ratio it is not


def sum_counters(outcomes: list[Outcome]) -> dict[str, int]:
    """Counters summed; those in WHOLE_ONLY only when every worker has them (a worker that died reported its counts
    in its windows, not its wire bytes)."""
    total: dict[str, int] = defaultdict(int)
    for outcome in outcomes:
        for key, value in outcome.counters.items():
            total[key] += value
    for key in WHOLE_ONLY:
        if key in total and not all(key in outcome.counters for outcome in outcomes):
            del total[key]
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

"""OMB's result file (its `TestResult`), written from a run's windows: the same keys and units, so OMB's own
`bin/create_charts.py` and dashboards built on OMB results read it.

Per window of the measured phase (the warm-up's windows are left out, as OMB resets its stats after its warm-up):
`publishRate`, `publishErrorRate`, `consumeRate` (records/s), `backlog` (records, from the start of the load), and
the publish, publish-delay and end-to-end latency's avg, 50, 75, 95, 99, 99.9, 99.99 percentiles and max: publish
and end-to-end in milliseconds, publish delay in microseconds, as OMB writes them. The `aggregated*` figures and the
three quantile maps come from the measured phase's histograms, merged exactly; the maps' keys are the percentiles
HdrHistogram's `percentiles(100)` iteration steps through, as OMB's are.

What kafkabench measures differently, and says in the docs: end-to-end latency runs from each record's intended
send time to the consumer, in microseconds on one host's monotonic clock, where OMB takes the consumer's wall clock
minus the record's millisecond timestamp and drops samples at or below 0 ms; publish latency is the same span
(send call to acknowledgement).
"""

from __future__ import annotations

import functools
import math
from datetime import datetime
from pathlib import Path

from kafkabench.core.histogram import LatencyHistogram
from kafkabench.core.timeline import TimelineEntry, combined, phase_histograms

PERCENTILES = (("50pct", 50.0), ("75pct", 75.0), ("95pct", 95.0), ("99pct", 99.0), ("999pct", 99.9),
               ("9999pct", 99.99))
LATENCIES = (("publishLatency", "publish_latency", 1e-3), ("publishDelayLatency", "publish_delay", None),
             ("endToEndLatency", "e2e", 1e-3))  # OMB's name, kafkabench's metric, us -> OMB's unit (None: whole us)
TICKS_PER_HALF_DISTANCE = 100  # HdrHistogram's percentiles(100), as OMB reports its quantiles
MAX_QUANTILES = 5000


def omb_result(workload_name: str, driver: str, workload, produced: list[TimelineEntry],
               consumed: list[TimelineEntry]) -> dict:
    """`workload`: OMB's Workload (its fields go into the metadata); `produced`/`consumed`: every window of each role
    in order, the warm-up's marked."""
    measured = _full_windows([e for e in produced if e.phase is None])
    reads = [e for e in consumed if e.phase is None]
    if len(reads) > len(measured) and measured:  # what consumers read after the producers' end: the last window's
        reads = reads[:len(measured) - 1] + [functools.reduce(combined, reads[len(measured) - 1:])]
    result: dict = {"workload": workload_name, "driver": driver, "messageSize": workload.message_size,
                    "topics": workload.topics, "partitions": workload.partitions_per_topic,
                    "producersPerTopic": workload.producers_per_topic,
                    "consumersPerTopic": workload.consumer_per_subscription}
    windows = len(measured)
    reads = reads[:windows] + [None] * (windows - len(reads))
    result["publishRate"] = [_rate(e.records, e) for e in measured]
    result["publishErrorRate"] = [_rate(e.errors, e) for e in measured]
    result["consumeRate"] = [_rate(e.records, e) if e else 0.0 for e in reads]
    result["backlog"] = _backlog(produced, consumed, measured, reads, workload.subscriptions_per_topic)
    for name, metric, unit in LATENCIES:
        source = reads if metric == "e2e" else measured
        per_window = [_figures(e.histogram(metric) if e else LatencyHistogram(), unit) for e in source]
        for key in ("Avg", *(suffix for suffix, _ in PERCENTILES), "Max"):
            result[f"{name}{key}"] = [figures[key] for figures in per_window]
    for name, metric, unit in LATENCIES:
        entries = [e for e in reads if e] if metric == "e2e" else measured
        histogram = phase_histograms(entries).get(metric, LatencyHistogram())
        for key, value in _figures(histogram, unit).items():
            result[f"aggregated{name[0].upper()}{name[1:]}{key}"] = value
        result[f"aggregated{name[0].upper()}{name[1:]}Quantiles"] = quantiles(histogram, unit)
    return result


def result_name(workload_file: Path, driver: str, when: datetime) -> str:
    """OMB's own file name: the workload file's stem, the driver's name, the time to the second."""
    return f"{workload_file.stem}-{driver}-{when:%Y-%m-%d-%H-%M-%S}.json"


def _full_windows(entries: list[TimelineEntry]) -> list[TimelineEntry]:
    """The windows, the last folded into the one before when it is the short remainder after the producers' end (the
    acknowledgements that came after the last full window): OMB's lists hold whole windows only."""
    if len(entries) < 2:
        return entries
    last, before = entries[-1], entries[-2]
    if (last.end_ns - last.start_ns) * 2 < before.end_ns - before.start_ns:
        return entries[:-2] + [combined(before, last)]
    return entries


def _rate(count: int, entry: TimelineEntry) -> float:
    seconds = (entry.end_ns - entry.start_ns) / 1e9
    return count / seconds if seconds > 0 else 0.0


def _backlog(produced: list[TimelineEntry], consumed: list[TimelineEntry], measured: list[TimelineEntry],
             reads: list[TimelineEntry | None], readers: int) -> list[int]:
    """Records written and not yet read at the end of each measured window, counted from the start of the load as
    OMB counts them (every subscription reads every record)."""
    written = sum(e.records for e in produced if e.phase)
    read = sum(e.records for e in consumed if e.phase)
    backlog = []
    for entry, reading in zip(measured, reads):
        written += entry.records
        read += reading.records if reading else 0
        backlog.append(max(0, readers * written - read))
    return backlog


def _figures(histogram: LatencyHistogram, unit: float | None) -> dict[str, float | int]:
    """avg, the named percentiles and max in OMB's unit: 0 for an empty window, as HdrHistogram answers."""
    summary = histogram.summary()
    values = histogram.percentiles_ms(*(p for _, p in PERCENTILES)) if summary else [0.0] * len(PERCENTILES)
    figures = {"Avg": summary.mean_ms * 1000 if summary else 0.0,
               **{suffix: value * 1000 for (suffix, _), value in zip(PERCENTILES, values)},
               "Max": summary.max_ms * 1000 if summary else 0.0}
    return {key: _unit(value, unit, exact_mean=key == "Avg") for key, value in figures.items()}


def _unit(micros: float, unit: float | None, exact_mean: bool = False) -> float | int:
    if unit is None:  # OMB keeps the delay's percentiles as whole microseconds, its mean as a double
        return micros if exact_mean else int(round(micros))
    return micros * unit


def quantiles(histogram: LatencyHistogram, unit: float | None) -> dict[str, float | int]:
    """percentile -> value, at the levels HdrHistogram's percentile iteration reports with 100 ticks per half
    distance: 0, 1, 2, ... then ever denser toward 100, ending at 100 with the maximum."""
    if histogram.count == 0:
        return {}
    summary = histogram.summary()
    levels, level = [], 0.0
    while 100 - level > 50 / histogram.count and len(levels) < MAX_QUANTILES:  # until less than half a value is left
        levels.append(level)
        ticks = TICKS_PER_HALF_DISTANCE * 2 ** (int(math.log2(100 / (100 - level))) + 1)
        level += 100 / ticks
    values = histogram.percentiles_ms(*levels)
    mapped = {str(level): _unit(value * 1000, unit) for level, value in zip(levels, values)}
    mapped["100.0"] = _unit(summary.max_ms * 1000, unit)
    return mapped

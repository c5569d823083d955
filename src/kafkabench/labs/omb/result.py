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
    start_ns = measured[0].start_ns if measured else 0
    reading = [e for e in consumed if _middle(e) >= start_ns]  # the consumers' measured windows
    reads = _spread(reading, measured)
    result: dict = {"workload": workload_name, "driver": driver, "messageSize": workload.message_size,
                    "topics": workload.topics, "partitions": workload.partitions_per_topic,
                    "producersPerTopic": workload.producers_per_topic,
                    "consumersPerTopic": workload.consumer_per_subscription}
    result["publishRate"] = [_rate(e.records, e) for e in measured]
    result["publishErrorRate"] = [_rate(e.errors, e) for e in measured]
    result["consumeRate"] = [records / seconds for records, _, seconds in reads]
    written = sum(e.records for e in produced if e.phase)
    read = sum(e.records for e in consumed if _middle(e) < start_ns)
    readers = workload.subscriptions_per_topic
    result["backlog"] = []
    for window, (records, _, _) in zip(measured, reads):  # from the start of the load, as OMB counts it
        written, read = written + window.records, read + records
        result["backlog"].append(max(0, round(readers * written - read)))
    for name, metric, unit in LATENCIES:
        histograms = [h for _, h, _ in reads] if metric == "e2e" else [e.histogram(metric) for e in measured]
        per_window = [_figures(h, unit) for h in histograms]
        for key in ("Avg", *(suffix for suffix, _ in PERCENTILES), "Max"):
            result[f"{name}{key}"] = [figures[key] for figures in per_window]
        histogram = phase_histograms(reading if metric == "e2e" else measured).get(metric, LatencyHistogram())
        for key, value in _figures(histogram, unit).items():
            result[f"aggregated{name[0].upper()}{name[1:]}{key}"] = value
        result[f"aggregated{name[0].upper()}{name[1:]}Quantiles"] = quantiles(histogram, unit)
    return result


def _spread(reading: list[TimelineEntry],
            measured: list[TimelineEntry]) -> list[tuple[float, LatencyHistogram, float]]:
    """The consumers' windows in the producers', which they need not line up with (a backlog's consumers start
    mid-run): each window's records in proportion to the time it shares with each consumer window, and its e2e
    latencies from the consumer windows that lie mostly in it (else the one it shares most with). What the consumers
    read after the producers' last window is counted in it, over its longer span. (records, e2e, seconds) each."""
    spread = []
    for index, window in enumerate(measured):
        end = window.end_ns if index < len(measured) - 1 else max([window.end_ns] + [e.end_ns for e in reading])
        shares = [(entry, _overlap(entry, window.start_ns, end) / max(1, entry.end_ns - entry.start_ns))
                  for entry in reading]
        records = sum(entry.records * share for entry, share in shares)
        mostly = [entry for entry in reading if _home(entry, measured) == index]
        if not mostly and records:
            mostly = [max(shares, key=lambda pair: pair[1])[0]]
        histogram = LatencyHistogram()
        for entry in mostly:
            histogram.merge(entry.histogram("e2e"))
        spread.append((records, histogram, max((end - window.start_ns) / 1e9, 1e-9)))
    return spread


def _home(entry: TimelineEntry, measured: list[TimelineEntry]) -> int:
    """The producers' window a consumer window lies mostly in."""
    overlaps = [_overlap(entry, w.start_ns, w.end_ns) for w in measured]
    return max(range(len(measured)), key=lambda i: overlaps[i]) if any(overlaps) else len(measured) - 1


def _overlap(entry: TimelineEntry, start_ns: int, end_ns: int) -> int:
    return max(0, min(entry.end_ns, end_ns) - max(entry.start_ns, start_ns))


def _middle(entry: TimelineEntry) -> int:
    return (entry.start_ns + entry.end_ns) // 2


def _seconds(entry: TimelineEntry) -> float:
    return max((entry.end_ns - entry.start_ns) / 1e9, 1e-9)


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
    return count / _seconds(entry)


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

"""The producers' publish latency over a delivery run (from the send call to the answer, as each client reports it),
from the full histogram of every progress window the workers send (0.2 s each): per window of the run's timeline,
p50, p99 and max; around each fault or operation, before, during and after it, from the windows' histograms
merged. Percentiles are never averaged: a span's figure is its merged histogram's.

A window counts where the orchestrator received it (the run's clock, as the faults' events), which is within one
progress interval of the acknowledgements it holds."""

from __future__ import annotations

from kafkabench.core.histogram import LatencyHistogram

Windows = list[tuple[float, LatencyHistogram]]  # (seconds of the run, the window's publish latencies)


def decoded(seen: list, origin: float) -> Windows:
    """Every producer's windows, on the run's clock, in time order."""
    return sorted(((t - origin, LatencyHistogram.decode(encoded)) for one in seen for t, encoded in one.windows),
                  key=lambda window: window[0])


def merged(windows: Windows, from_s: float, to_s: float) -> LatencyHistogram:
    """The windows received in [from_s, to_s), merged."""
    total = LatencyHistogram()
    for at, histogram in windows:
        if from_s <= at < to_s:
            total.merge(histogram)
    return total


def figures(histogram: LatencyHistogram) -> dict | None:
    """count, p50, p99 and max in ms; None when nothing was acknowledged."""
    if not histogram.count:
        return None
    p50, p99, top = histogram.percentiles_ms(50, 99, 100)
    return {"count": histogram.count, "p50_ms": round(p50, 3), "p99_ms": round(p99, 3), "max_ms": round(top, 3)}


def around(windows: Windows, events: list[dict], end_s: float) -> list[dict]:
    """Per fault or operation that fired and ended: the publish latency before it (since the one before ended, or
    the start), during it (fired to healed or done) and after it (until the next one fired, or the end)."""
    done = [event for event in events if event.get("fired_s") is not None and event.get("healed_s") is not None]
    found = []
    for index, event in enumerate(done):
        previous = done[index - 1]["healed_s"] if index else 0.0
        following = done[index + 1]["fired_s"] if index + 1 < len(done) else end_s
        found.append({"fault": event["fault"], "fired_s": event["fired_s"], "healed_s": event["healed_s"],
                      **{name: figures(merged(windows, from_s, to_s)) for name, (from_s, to_s) in (
                          ("before", (previous, event["fired_s"])), ("during", (event["fired_s"], event["healed_s"])),
                          ("after", (event["healed_s"], following)))}})
    return found


def into_timeline(timeline: list[dict], windows: Windows) -> None:
    """Each timeline entry (a window ending at t_s, window_s long) gets its publish p50, p99 and max (None: nothing
    acknowledged in it)."""
    for entry in timeline:
        said = figures(merged(windows, entry["t_s"] - entry["window_s"], entry["t_s"])) or {}
        entry.update({f"publish_{name}": said.get(name) for name in ("p50_ms", "p99_ms", "max_ms")})


def producer_cell(run, seen: list, origin: float, end: float) -> None:
    """The cell's publish latency: overall, around each fault or operation (`params.publish_latency`), and per
    timeline window; nothing when no producer reported a window (a client that does not say)."""
    windows = decoded(seen, origin)
    if not windows:
        return
    run.params["publish_latency"] = {"all": figures(merged(windows, float("-inf"), float("inf"))),
                                     "around": around(windows, run.params.get("faults", []), end - origin)}
    into_timeline(run.timeline or [], windows)

"""The producers' publish latency over a delivery run (from the send call to the answer, as each client reports it),
and with --e2e the e2e latency (a message's intended send time to the probe consumer holding it), from the full
histogram of every progress window the workers send: per window of the run's timeline, p50, p99 and max; around
each fault or operation, before, during and after it, from the windows' histograms merged. Percentiles are never
averaged: a span's figure is its merged histogram's. "Before" is the BEFORE_S seconds before the event (fewer when the
one before ended later): like is compared with like, not with the run's first seconds (connections, metadata, cold
JVMs), which a plan keeps out by letting the load run longer than that before its first event.

A window counts where the orchestrator received it (the run's clock, as the faults' events), which is within one
progress interval of the acknowledgements (or records read) it holds."""

from __future__ import annotations

from kafkabench.core.histogram import LatencyHistogram

BEFORE_S = 10.0  # "before" an event: the steady state just before it, not the clients' and brokers' first seconds
Windows = list[tuple[float, LatencyHistogram]]  # (seconds of the run, the window's publish latencies)


def decoded(received: list[tuple[float, str]], origin: float) -> Windows:
    """Windows (monotonic time received, encoded histogram), on the run's clock, in time order."""
    return sorted(((t - origin, LatencyHistogram.decode(encoded)) for t, encoded in received),
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
    """Per fault or operation that fired and ended: the latency before it (the BEFORE_S seconds before it fired, or
    fewer since the one before ended), during it (fired to healed or done) and after it (until the next one fired, or
    the end)."""
    done = [event for event in events if event.get("fired_s") is not None and event.get("healed_s") is not None]
    found = []
    for index, event in enumerate(done):
        previous = max(done[index - 1]["healed_s"] if index else 0.0, event["fired_s"] - BEFORE_S)
        following = done[index + 1]["fired_s"] if index + 1 < len(done) else end_s
        found.append({"fault": event["fault"], "fired_s": event["fired_s"], "healed_s": event["healed_s"],
                      **{name: figures(merged(windows, from_s, to_s)) for name, (from_s, to_s) in (
                          ("before", (previous, event["fired_s"])), ("during", (event["fired_s"], event["healed_s"])),
                          ("after", (event["healed_s"], following)))}})
    return found


def into_timeline(timeline: list[dict], windows: Windows, name: str = "publish") -> None:
    """Each timeline entry (a window ending at t_s, window_s long) gets its `name` p50, p99 and max (None: nothing
    in it)."""
    for entry in timeline:
        said = figures(merged(windows, entry["t_s"] - entry["window_s"], entry["t_s"])) or {}
        entry.update({f"{name}_{figure}": said.get(figure) for figure in ("p50_ms", "p99_ms", "max_ms")})


def producer_cell(run, seen: list, origin: float, end: float, e2e: list[tuple[float, str]] = ()) -> None:
    """The cell's publish latency and, from `e2e` (the probe's windows), its e2e latency: each overall, around each
    fault or operation (`params.publish_latency`, `params.e2e_latency`), and per timeline window; nothing for a
    latency no worker reported a window of (a client that does not say, no probe)."""
    for name, received in (("publish", [window for one in seen for window in one.windows]), ("e2e", list(e2e))):
        windows = decoded(received, origin)
        if not windows:
            continue
        run.params[f"{name}_latency"] = {"all": figures(merged(windows, float("-inf"), float("inf"))),
                                         "around": around(windows, run.params.get("faults", []), end - origin)}
        into_timeline(run.timeline or [], windows, name)

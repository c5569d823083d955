"""A delivery cell's liveness verdict and its progress over time, from what the orchestrator saw of each process
(core.liveness): per process the longest stall, where it began against the faults, and how it ended; per window of
fixed length, what was acknowledged (the producers), processed and committed (the consumers or copiers)."""

from __future__ import annotations

import math

from kafkabench.core.liveness import against_faults, windows
from kafkabench.labs.delivery import latency

MAX_WINDOWS = 600  # a longer run gets wider windows, never a longer series
HOW = {"finished": "finished", "killed": "killed", "replaced": "replaced"}  # any other end: the process exited


def verdict_row(process: str, client: str, track, end_at: float, how: str, origin: float, faults: list[dict]) -> dict:
    """One process's verdict as the result keeps it (`params.liveness`), its seconds on the faults' clock."""
    verdict = track.verdict(end_at, how).to_dict(origin)
    if verdict["stalls"]:
        verdict["against"] = against_faults(verdict["began_s"], verdict["ended_s"], faults)
    return {"process": process, "client": client, **verdict}


def member_how(ended: str | None, alive_at_end: bool) -> str:
    """How a member's open stall ended: still stuck when the run ended with it alive, else by its process's end."""
    return "stuck" if alive_at_end or ended is None else HOW.get(ended, "exited")


def progress_timeline(series: dict[str, list[list[tuple[float, int]]]], origin: float, end: float) -> list[dict]:
    """`series`: per kind (acknowledged, processed, committed) each process's cumulative (monotonic time, count).
    One entry per window from the origin to the end: its end `t_s`, and per kind the count and rate in it; the
    first kind given is also `records` and `records_per_s`, the series every timeline has."""
    span = max(end - origin, 1e-3)
    width = max(1.0, math.ceil(span / MAX_WINDOWS))
    binned = {kind: windows([[(t - origin, count) for t, count in points] for points in processes], width, span)
              for kind, processes in series.items() if processes}
    if not binned:
        return []
    first = next(iter(binned))
    return [{"t_s": round((k + 1) * width, 3), "window_s": width,
             **{f"{kind}": counts[k] for kind, counts in binned.items()},
             **{f"{kind}_per_s": counts[k] / width for kind, counts in binned.items()},
             "records": binned[first][k], "records_per_s": binned[first][k] / width}
            for k in range(len(binned[first]))]


def producer_cell(run, seen: list, client: str, e2e: list[tuple[float, str]] = ()) -> None:
    """A producer cell's verdicts (one per producer process), its acknowledgements per window and its publish (and
    with `e2e`, the probe's windows, e2e) latency (labs.delivery.latency)."""
    starts = [one.started_at for one in seen if one.started_at is not None]
    if not starts:
        return
    origin, end = min(starts), max(one.ended_at or one.started_at for one in seen if one.started_at is not None)
    faults = run.params.get("faults", [])
    run.params["liveness"] = [verdict_row(f"producer {number}" if len(seen) > 1 else "producer", client, one.track,
                                          one.ended_at or end, "finished", origin, faults)
                              for number, one in enumerate(seen, 1) if one.started_at is not None]
    run.timeline = progress_timeline({"acknowledged": [[(t, acked) for t, _, acked in one.points] for one in seen]},
                                     origin, end)
    latency.producer_cell(run, seen, origin, end, e2e)


def consumer_cell(run, cell, seen: list, members, origin: float, end: float) -> None:
    """Each process's liveness verdict (the input producer's and every member's), and the cell's progress per window."""
    faults = run.params.get("faults", [])
    role = "copier" if cell.mode == "copy" else "consumer"
    rows = [verdict_row("producer", cell.client, one.track, one.ended_at or end, "finished", origin, faults)
            for one in seen]
    for member in members.members:
        alive = member.ended_at is None or member.ended_at > end
        rows.append(verdict_row(f"{role} {member.slot}.{member.incarnation}", cell.client, member.track,
                                end if alive else member.ended_at, member_how(member.ended, alive), origin, faults))
    run.params["liveness"] = rows
    run.timeline = progress_timeline({
        "acknowledged": [[(t, acked) for t, _, acked in one.points] for one in seen],
        "processed": [[(t, processed) for t, processed, _ in member.progress] for member in members.members],
        "committed": [[(t, committed) for t, _, committed in member.progress] for member in members.members]},
        origin, end)
    latency.producer_cell(run, seen, origin, end)

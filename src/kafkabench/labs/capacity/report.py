"""The capacity lab's report parts: a row per step (offered, achieved, each SLO percentile with the upper end of
its interval, the lag slope, the verdict), the answer in one line, and why each failed step failed."""

from __future__ import annotations

from kafkabench.core.results import ResultDocument
from kafkabench.report.table import Table, columns, fixed, ms, settings_text

TIPS = {"offered/s": "capacity_offered", "achieved/s": "capacity_achieved", "lag ms/s": "capacity_lag_slope",
        "verdict": "capacity_verdict"}


def steps_table(document: ResultDocument) -> Table:
    params = document.params
    metric = params.get("metric", "e2e")
    slo_names = [f"p{float(text.split('=')[0].strip().lower().lstrip('p')):g}" for text in params.get("slo", [])]
    names = ["step", "kind", "offered/s", "achieved/s", "MB/s",
             *(f"{metric} {name} (95 % up to)" for name in slo_names), "lag ms/s", "verdict"]
    title = (f"{document.lab}: client {params.get('client')}, {params.get('size')}-byte values, "
             f"{params.get('producers')} producer(s), {params.get('consumers')} consumer(s), {params.get('partitions')} "
             f"partition(s), RF {params.get('replication_factor')}{settings_text(params)}; latencies in ms")
    table = Table(title, columns(names, ("kind", "verdict"), TIPS, wide=("MB/s", "lag ms/s")))
    for number, step in enumerate(params.get("steps", []), 1):
        offered = "unpaced" if step["offered"] < 0 else f"{step['offered']:,.0f}"
        achieved = "-" if step["achieved"] is None else f"{step['achieved']:,.0f}"
        percentiles = [_interval(step["percentiles_ms"].get(name)) for name in slo_names]
        slope = step.get("lag_slope_s_per_s")
        lag = "-" if slope is None else f"{slope[0] * 1000:+,.1f}"
        verdict = "-" if step["kind"] == "probe" else step["verdict"]
        several = params.get("searches", 1) > 1 and "search" in step
        kind = f"{step['kind']} {step['search']}" if several else step["kind"]
        table.add(str(number), kind, offered, achieved, fixed(step.get("mb_per_s")), *percentiles, lag, verdict,
                  kind="error" if step.get("error") else "")
    return table


def _interval(values: list[float] | None) -> str:
    return "-" if values is None else f"{ms(values[0])} ({ms(values[2])})"


def headline(document: ResultDocument) -> str:
    """`sustainable: 41,300 records/s (40.3 MB/s) with e2e p99 38 ms <= 50 ms, held; 2 searches found 40,100 ..
    43,400; next step 43,400 failed: ...`"""
    params = document.params
    found = params.get("sustainable")
    if not found:
        why = _why_none(params)
        return f"no rate sustained: {why}" if why else "no rate sustained"
    metric, limits = params.get("metric", "e2e"), _limits(document)
    mb = f" ({found['mb_per_s']:.1f} MB/s)" if found.get("mb_per_s") else ""
    figures = [f"{metric} {name} {ms(values[0])} ms <= {limits[name]:g} ms"
               for name, values in found.get("percentiles_ms", {}).items() if name in limits]
    line = f"sustainable: {found['records_per_s']:,.0f} records/s{mb}" + (f" with {', '.join(figures)}" if figures else "")
    if found.get("from") == "sweep":
        return f"{line} (the highest rate of the sweep that passed every repeat)"
    if found.get("held"):
        failed = _rates(found.get("holds_failed", []))
        held = f", held {found['holds']} times" if found.get("holds", 1) > 1 else ", held"
        line += f"{held} (after the holds at {failed} failed)" if failed else held
    else:
        line += ", unsure (a step at it failed, its confirm passed)" if found.get("unsure") else ", not held"
    if spread := searches_text(found.get("searches")):
        line += f"; {spread}"
    if found.get("next_failed"):
        line += f"; next step {found['next_failed']:,.0f} failed: {'; '.join(found.get('next_reasons', []))}"
    return line


def searches_text(searches: dict | None) -> str:
    """`3 searches found 111,849 .. 197,798 (median 160,677)` or `1 search: its spread is unknown`."""
    if not searches:
        return ""
    if searches["count"] == 1:
        return "1 search: the answer's spread is unknown (--searches 2 or more measure it)"
    if searches["median"] is None:
        return f"none of {searches['count']} searches found a rate"
    none = f", {searches['none']} found none" if searches["none"] else ""
    return (f"{searches['count']} searches found {searches['low']:,.0f} .. {searches['high']:,.0f} "
            f"(median {searches['median']:,.0f}{none})")


def disagreement(document: ResultDocument) -> str | None:
    """The verdict line when the searches found rates further apart than the precision."""
    searches = (document.params.get("sustainable") or {}).get("searches")
    precision = document.params.get("precision", 0.05)
    if not searches or searches.get("spread") is None or searches["spread"] <= precision:
        return None
    return (f"searches disagree by {searches['spread']:.0%}: this cluster's capacity moved while it was measured; "
            "see the steps")


def _why_none(params: dict) -> str:
    holds = params.get("hold_results")
    if holds and holds.get("failed"):
        return f"no hold passed ({_rates(holds['failed'])} failed; {holds['stop_reason']})"
    return params.get("stop_reason", "")


def _rates(rates: list[float]) -> str:
    return ", ".join(f"{rate:,.0f}" for rate in rates)


def _limits(document: ResultDocument) -> dict[str, float]:
    from kafkabench.labs.capacity.slo import parse_slo

    return {slo.name: slo.limit_ms for slo in map(parse_slo, document.params.get("slo", []))}


def lines(document: ResultDocument) -> list[str]:
    out = [f"step {n} failed: {'; '.join(step['reasons'])}" for n, step in enumerate(document.params.get("steps", []), 1)
           if step["verdict"] == "fail" and step["kind"] != "probe"]
    if document.params.get("stop_reason"):
        out.append(f"stopped: {document.params['stop_reason']}")
    out += [note for note in document.notes if note.startswith("the hold")]
    out += stall_lines(document)
    if verdict := disagreement(document):
        out.append(verdict)
    return out + [headline(document)]  # the answer, last


def stall_lines(document: ResultDocument) -> list[str]:
    """Under held faults, liveness beside the verdicts: each role's longest stall over every step, or that none
    stalled."""
    if not document.params.get("faults"):
        return []
    out = []
    for role, doing in (("produce", "acknowledged"), ("consume", "received")):
        found = [(n, step["liveness"][role]) for n, step in enumerate(document.params.get("steps", []), 1)
                 if role in step.get("liveness", {})]
        stalled = [(n, verdict) for n, verdict in found if verdict["stalls"]]
        if not found:
            continue
        if not stalled:
            out.append(f"liveness ({role}): no stall over {len(found)} steps (nothing {doing} for over a second)")
            continue
        n, worst = max(stalled, key=lambda pair: pair[1]["longest_stall_s"])
        until = "until the step ended" if worst["ended"] == "stuck" else f"then {worst['ended']}"
        out.append(f"liveness ({role}): nothing {doing} for {worst['longest_stall_s']:.1f} s in step {n}, from "
                   f"{worst['began_s']:.1f} s into it, {until}; {len(stalled)} of {len(found)} steps stalled")
    return out


# ---- backlog --------------------------------------------------------------------------------------

def phases_table(document: ResultDocument) -> Table:
    params = document.params
    title = (f"{document.lab}: client {params.get('client')}, {params.get('size')}-byte values at "
             f"{params.get('rate', 0):,.0f} records/s, {params.get('consumers')} consumer(s), "
             f"{params.get('partitions')} partition(s){settings_text(params)}; latencies in ms")
    table = Table(title, columns(["phase", "role", "records", "records/s", "MB/s", "latency", "p50", "p99", "p99.9"],
                                 ("phase", "role", "latency")))
    for run in document.runs:
        metric = "e2e" if run.params.get("role") == "consume" else "publish_latency"
        stat = run.stats.get(metric)
        table.add(run.params.get("phase", ""), run.params.get("role", ""), f"{run.counters.get('records', 0):,}",
                  f"{run.throughput.get('records_per_s', 0):,.0f}", fixed(run.throughput.get("payload_mb_per_s")),
                  "e2e" if metric == "e2e" else "publish", *(ms(getattr(stat, f, None)) for f in ("p50_ms", "p99_ms", "p999_ms")))
    return table


def backlog_headline(document: ResultDocument) -> str:
    """`drained 2,000 MB in 41.3 s: consumers read 120,000 records/s while producers sent 50,000`"""
    figures = document.params.get("backlog")
    if not figures or figures.get("build_s") is None:
        return ""
    megabytes = figures["built_bytes"] / 1e6
    built = (f"{megabytes:,.{0 if megabytes >= 100 else 1}f} MB ({figures['built_records']:,} records, "
             f"{figures['build_s']:.1f} s)")
    consume, produce = figures.get("catch_up_records_per_s"), figures.get("produce_records_per_s")
    rates = (f"consumers read {consume:,.0f} records/s while producers sent {produce:,.0f}"
             if consume is not None and produce is not None else "")
    if figures["drained"]:
        return f"drained a backlog of {built} in {figures['drain_s']:.1f} s: {rates}"
    projected = figures.get("projected_drain_s")
    when = (f"at these rates it would take {projected:,.0f} s more" if projected is not None
            else "it never would: the consumers read no faster than the producers write")
    return (f"not drained within {document.params.get('max_drain', 0):g} s: {rates}; "
            f"{figures.get('left_records', 0):,} records left, {when}")

"""The delivery lab's report parts: what became of every message per cell (the checker's counts), the seed's
stopwatch per cell (ms of each single send, of the bulk, of the closing or sleeping, ms per event, and how the
process ended), the faults as they fired and healed, and a verdict in words per cell."""

from __future__ import annotations

import dataclasses

from kafkabench.core.results import ResultDocument, Run
from kafkabench.labs.delivery.checker import Verdict
from kafkabench.labs.delivery.verdicts import verdict_lines
from kafkabench.report.table import Table, columns, fixed

VERDICT_NAMES = ["cell", "client", "sent", "acked", "failed", "unknown", "lost", "duplicated", "reordered",
                 "failed, present", "unknown found", "unknown absent", "offset mismatch", "delivered %"]
VERDICT_TIPS = {"lost": "delivery_lost", "duplicated": "delivery_duplicated", "reordered": "delivery_reordered",
                "failed, present": "delivery_despite_error", "unknown found": "delivery_unknown",
                "unknown absent": "delivery_unknown", "offset mismatch": "delivery_offset_mismatch",
                "delivered %": "delivery_delivered"}
ENDING = {"sync": "closing", "async-close": "closing", "async-sleep": "sleeping"}


def verdict_of(run: Run) -> Verdict | None:
    """The checker's verdict as the run recorded it; None when the cell never got to the check."""
    if "loss_confirmed" not in run.params:
        return None
    names = {f.name for f in dataclasses.fields(Verdict)} - {"idempotent", "loss_confirmed"}
    return Verdict(idempotent=bool(run.params.get("idempotent")), loss_confirmed=bool(run.params["loss_confirmed"]),
                   **{name: int(run.counters.get(name, 0)) for name in names})


def verdict_table(document: ResultDocument) -> Table:
    title = (f"delivery: what became of every message, {document.params.get('count', '?'):,} per cell, read back "
             f"read_committed after the cluster healed; lost = acknowledged and not read back (confirmed by a second "
             f"read)") if isinstance(document.params.get("count"), int) else "delivery: what became of every message"
    table = Table(title, columns(VERDICT_NAMES, ("cell", "client"), VERDICT_TIPS))
    for run in document.runs:
        verdict = verdict_of(run)
        label = run.params.get("settings", run.params.get("cell", run.client))
        if verdict is None:
            table.add(label, run.client, *["-"] * (len(VERDICT_NAMES) - 2),
                      kind="dominated" if run.params.get("refused") else "error")
            continue
        counts = [verdict.sent, verdict.acknowledged, verdict.failed, verdict.unknown, verdict.lost, verdict.duplicated,
                  verdict.reordered, verdict.delivered_despite_error, verdict.unknown_found, verdict.unknown_not_found,
                  verdict.offset_mismatch]
        failing = bool(verdict.failures) or bool(run.error)
        table.add(label, run.client, *(f"{count:,}" for count in counts), _pct(verdict.delivered_pct),
                  kind="error" if failing else "reference" if run.client == "apache" else "")
    return table


def stopwatch_table(document: ResultDocument) -> Table:
    """The seed's table turned sideways: one row per cell instead of one stopwatch print per run."""
    singles = max((sum(1 for name in run.timings if name.startswith("single_")) for run in document.runs), default=0)
    names = ["cell", "client", *(f"send {i}" for i in range(singles)), "bulk", "closing / sleeping", "ms/event",
             "process end"]
    table = Table(f"the seed's stopwatch: ms of each of the first {singles} sends alone, of the bulk of the rest, of "
                  "the closing or sleeping; ms/event = all of it / count",
                  columns(names, ("cell", "client", "process end"), {"ms/event": "delivery_ms_per_event"}))
    for run in document.runs:
        if "ms_per_event" not in run.timings:
            continue
        timings = run.timings
        table.add(run.params.get("settings", run.client), run.client,
                  *(fixed(timings.get(f"single_{i + 1}_ms"), 3) for i in range(singles)),
                  fixed(timings.get("bulk_ms"), 1),
                  fixed(timings.get("ending_ms"), 1) if run.params.get("mode", "").split(":")[0] in ENDING else "-",
                  fixed(timings["ms_per_event"], 4), run.params.get("process_end", "-"),
                  kind="reference" if run.client == "apache" else "")
    return table


def tables(document: ResultDocument) -> list[Table]:
    return [verdict_table(document), stopwatch_table(document)]


def lines(document: ResultDocument) -> list[str]:
    found = []
    for run in document.runs:
        label = f"{run.params.get('settings', '')} ({run.client})"
        verdict = verdict_of(run)
        if verdict is not None:
            said = verdict_lines(verdict, label)
            coverage = run.params.get("fault_coverage")
            found += [f"{said[0]}; {coverage}" if coverage else said[0], *said[1:]]
        found += [f"{label}: {text}" for text in fault_texts(run)]
        if run.error:
            found.append(f"{label}: {run.error}")
    return found


def fault_texts(run: Run) -> list[str]:
    texts = []
    for event in run.params.get("faults", []):
        what = f"{event['fault']} (broker {event['broker']})" if event.get("broker") is not None else event["fault"]
        if event.get("fired_s") is None:
            texts.append(f"{what}: {event.get('error') or 'not fired'}")
            continue
        healed = f", healed at {event['healed_s']:.1f} s" if event.get("healed_s") is not None else ""
        failed = f": {event['error']}" if event.get("error") else ""
        texts.append(f"{what} at {event['fired_s']:.1f} s{healed}{failed}")
    return texts


def headline(document: ResultDocument) -> str:
    judged = [(run, verdict) for run in document.runs if (verdict := verdict_of(run)) is not None]
    if not judged:
        return ""
    losing = [(run, verdict) for run, verdict in judged if verdict.lost]
    short = [run for run, _ in judged if run.params.get("faults_fired", 0) < run.params.get("faults_planned", 0)]
    shortfall = f"; fewer faults fired than planned in {len(short)} cell(s)" if short else ""
    if not losing:
        acknowledged = sum(verdict.acknowledged for _, verdict in judged)
        return f"0 acknowledged messages lost in {len(judged)} cell(s): all {acknowledged:,} read back{shortfall}"
    run, worst = max(losing, key=lambda pair: pair[1].lost_pct or 0)
    return (f"acknowledged messages lost in {len(losing)} of {len(judged)} cell(s); most: "
            f"{run.params.get('settings')} ({run.client}): {worst.lost:,} of {worst.acknowledged:,}{shortfall}")


def _pct(value: float | None) -> str:
    if value is None:
        return "-"
    if 99.99 < value < 100:
        return "> 99.99"
    if 0 < value < 0.01:
        return "< 0.01"
    return f"{value:.2f}"

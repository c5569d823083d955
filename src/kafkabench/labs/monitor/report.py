"""The monitor's tables: one per window while it runs (per broker: availability, roundtrip p50 / p99, lost,
duplicated, out of order; per group: lag, lag seconds, status), and the whole watch's totals at the end."""

from __future__ import annotations

from kafkabench.core.results import ResultDocument
from kafkabench.report.table import Table, columns, fixed, ms, stat

BROKER_NAMES = ["broker", "availability", "roundtrip p50", "p99", "sent", "read", "lost", "failed", "dup", "out of order"]
GROUP_NAMES = ["group", "lag", "lag s", "status", "members"]


def window_table(window: dict) -> Table:
    table = Table(f"t={window['t_s']:.1f} s  (latencies in ms; availability over the last minute)",
                  columns(BROKER_NAMES, ("broker",)))
    for broker, f in window["brokers"].items():
        table.add(broker, fixed(f["availability"], 3), ms(f["roundtrip_p50_ms"]), ms(f["roundtrip_p99_ms"]),
                  str(f["sent"]), str(f["received"]), str(f["lost"]), str(f["failed"]), str(f["duplicated"]),
                  str(f["out_of_order"]), kind="error" if f["lost"] or f["failed"] else "")
    for group, g in window["groups"].items():
        seconds = "-" if g["lag_seconds"] is None else f"{'>= ' if g['lag_seconds_at_least'] else ''}{g['lag_seconds']:.1f}"
        table.add(f"group {group}", f"lag {g['lag']:,}", f"{seconds} s", g["status"], f"{g['members']} member(s)",
                  "", "", "", "", "", kind="" if g["status"] == "OK" else "error")
    return table


def tables(document: ResultDocument) -> list[Table]:
    table = Table("monitor: the whole watch (roundtrip in ms)",
                  columns(["probes sent", "read back", "lost", "failed", "duplicated", "out of order", "roundtrip p50",
                           "p99", "max", "outages"]))
    for run in document.runs:
        c = run.counters
        table.add(*(f"{c.get(name, 0):,}" for name in ("sent", "received", "lost", "failed", "duplicated",
                                                         "out_of_order")),
                  ms(stat(run, "roundtrip", "p50_ms")), ms(stat(run, "roundtrip", "p99_ms")),
                  ms(stat(run, "roundtrip", "max_ms")), str(len(run.params.get("outages", []))))
    return [table]


def lines(document: ResultDocument) -> list[str]:
    found = []
    for run in document.runs:
        for outage in run.params.get("outages", []):
            end = f"until {outage['healed_s']:.1f} s" if outage.get("healed_s") is not None else "to the end"
            found.append(f"broker {outage['broker']}: probes lost or failed from {outage['fired_s']:.1f} s {end}")
    return found


def headline(document: ResultDocument) -> str:
    if not document.runs or not document.runs[0].counters:
        return ""
    c = document.runs[0].counters
    return (f"{c.get('received', 0):,} of {c.get('sent', 0):,} probes read back within the SLA; {c.get('lost', 0):,} "
            f"lost, {c.get('duplicated', 0):,} duplicated, {c.get('out_of_order', 0):,} out of order")

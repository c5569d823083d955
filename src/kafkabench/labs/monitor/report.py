"""The monitor's tables: one per window while it runs, which a terminal keeps updated in place (per broker: state,
availability, roundtrip p50 / p99, lost, failed, duplicated, out of order; per group: status, lag, lag seconds; the
parts that restarted), and the whole watch's totals at the end."""

from __future__ import annotations

from kafkabench.core.results import ResultDocument
from kafkabench.report.table import Table, columns, fixed, ms, stat

# a terminal's table, in 100 columns: the per-window probe counts (sent, read back) are in the log's minute summary,
# the JSON lines, the metrics endpoint and the result
BROKER_NAMES = ["broker", "state", "availability", "p50", "p99", "lost", "failed", "dup", "out of order"]
GROUP_NAMES = ["group", "status", "lag", "lag s", "members"]
DOWN = {"fenced": ("fenced", " ago"), "not answering": ("not answering for", "")}


def window_tables(window: dict) -> list[Table]:
    """The brokers' table, the groups' when groups are watched, and the monitor's parts that restarted when any did."""
    restarted = {name: part for name, part in window["parts"].items() if part["state"] != "running" or part["restarts"]}
    return [_brokers(window)] + ([_groups(window["groups"])] if window["groups"] else []) + \
        ([_parts(restarted)] if restarted else [])


def _brokers(window: dict) -> Table:
    """Per broker: its state, then its probes' figures; a row in red when it is down or lost a probe."""
    table = Table(f"t={window['t_s']:.1f} s  (roundtrip p50 / p99 in ms; availability over the last minute)",
                  columns(BROKER_NAMES, ("broker", "state")))
    for broker, f in window["brokers"].items():
        table.add(broker, broker_state(f["state"], f["state_for_s"]), fixed(f["availability"], 3),
                  ms(f["roundtrip_p50_ms"]), ms(f["roundtrip_p99_ms"]), str(f["lost"]), str(f["failed"]),
                  str(f["duplicated"]), str(f["out_of_order"]),
                  kind="error" if f["lost"] or f["failed"] or f["state"] in DOWN else "")
    return table


def _groups(watched: dict) -> Table:
    table = Table("consumer groups (lag in records and in seconds)", columns(GROUP_NAMES, ("group", "status")))
    for group, g in watched.items():
        seconds = "-" if g["lag_seconds"] is None else f"{'>= ' if g['lag_seconds_at_least'] else ''}{g['lag_seconds']:.1f}"
        table.add(group, g["status"], f"{g['lag']:,}", seconds, str(g["members"]),
                  kind="" if g["status"] == "OK" else "error")
    return table


def _parts(restarted: dict) -> Table:
    """A part of the monitor restarted: in red while it is restarting."""
    table = Table("the monitor's parts that restarted", columns(["part", "state", "restarts"], ("part", "state")))
    for name, part in restarted.items():
        table.add(name, part["state"], f"{part['restarts']:,}", kind="sub" if part["state"] == "running" else "error")
    return table


def broker_state(state: str, for_s: float | None) -> str:
    """As the terminal's table shows it (a down broker's row in red): up, fenced 12 s ago, no answer 5 s ("no
    answer" without a time), "-" when unknown."""
    if state == "not answering":
        return f"no answer {duration(for_s)}" if for_s is not None else "no answer"
    if state in DOWN:
        return why_down(state, for_s)
    return "-" if state == "unknown" else state


def why_down(state: str, for_s: float | None) -> str:
    """fenced 12 s ago, not answering for 5 s; without `for_s` only fenced, not answering."""
    what, after = DOWN[state]
    return f"{what} {duration(for_s)}{after}" if for_s is not None else state


def duration(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:.0f} s"
    return f"{seconds / 60:.0f} min" if seconds < 7200 else f"{seconds / 3600:.0f} h"


def tables(document: ResultDocument) -> list[Table]:
    table = Table("monitor: the whole watch (roundtrip in ms)",
                  columns(["probes sent", "read back", "lost", "failed", "duplicated", "out of order", "roundtrip p50",
                           "p99", "max", "outages"], wide=("read back", "max")))
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

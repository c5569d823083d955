"""The compression lab's report parts: absolute figures, ratios to the same format uncompressed (the seed's two
tables), the Pareto front over stored size, duration and CPU, and the winner of each objective - instead of
summing ratios into one score."""

from __future__ import annotations

from kafkabench.core.results import ResultDocument, Run
from kafkabench.report.table import Table, columns, fixed, mb, ratio

OBJECTIVES = {"smallest": "stored_bytes", "fastest": "duration_s", "least CPU": "cpu_s"}
RATIO_KEYS = ("stored_bytes", "wire_bytes", "duration_s", "cpu_s", "broker_cpu_s")
TIPS = {"stored MB": "stored_bytes", "wire MB": "wire_bytes", "payload MB": "payload_bytes", "duration s": "duration_s",
        "producer CPU s": "cpu_s", "broker CPU s": "broker_cpu_s", "read+decode rows/s": "read_rows_per_s",
        "stored": "stored_bytes", "wire": "wire_bytes", "duration": "duration_s", "producer CPU": "cpu_s",
        "broker CPU": "broker_cpu_s"}


def label(run: Run) -> str:
    level = run.params.get("level")
    return f"{run.params.get('format', '?')} {run.params.get('codec', '?')}" + (f" {level}" if level is not None else "")


def objective(run: Run, name: str) -> float:
    if name == "stored_bytes":
        return run.counters["stored_bytes"]
    if name == "duration_s":
        return run.duration_s
    broker = run.resources.get("broker_cpu_s")
    return (run.resources.get("cpu_s") or 0) + (broker or 0)  # producer + broker where the broker is known


def measured(run: Run) -> bool:
    """A cell with every objective: only those are weighed on the Pareto front."""
    return run.error is None and "stored_bytes" in run.counters and run.duration_s > 0


def dominated(runs: list[Run]) -> set[int]:
    """Indexes of runs some other run beats or equals on every objective and beats on at least one."""
    names = list(OBJECTIVES.values())
    out = set()
    for i, a in enumerate(runs):
        for j, b in enumerate(runs):
            if i != j and all(objective(b, n) <= objective(a, n) for n in names) and \
                    any(objective(b, n) < objective(a, n) for n in names):
                out.add(i)
                break
    return out


def pareto(document: ResultDocument) -> list[str | None]:
    """front / dominated for each run; None for a cell without every objective."""
    weighed = [i for i, run in enumerate(document.runs) if measured(run)]
    worse = dominated([document.runs[i] for i in weighed])
    marks: list[str | None] = [None] * len(document.runs)
    for position, index in enumerate(weighed):
        marks[index] = "dominated" if position in worse else "front"
    return marks


def absolute_table(document: ResultDocument) -> Table:
    p = document.params
    title = (f"compression: {p.get('rows')} rows of {p.get('dataset')}, median of {p.get('repeats')} repeat(s) "
             "(MB = 10^6 bytes; CPU = producer process + broker processes)")
    names = ["format codec", "stored MB", "wire MB", "payload MB", "duration s", "producer CPU s", "broker CPU s",
             "read+decode rows/s", "pareto"]
    table = Table(title, columns(names, ("format codec", "pareto"), TIPS, wide=("wire MB", "payload MB", "broker CPU s")))
    for run, mark in zip(document.runs, pareto(document)):
        table.add(label(run), mb(run.counters.get("stored_bytes")), mb(run.counters.get("wire_bytes")),
                  mb(run.counters.get("payload_bytes")), fixed(run.duration_s), fixed(run.resources.get("cpu_s")),
                  fixed(run.resources.get("broker_cpu_s")), f"{run.throughput.get('read_rows_per_s', 0):,.0f}",
                  mark or "-", kind="error" if run.error else "dominated" if mark == "dominated" else "")
    return table


def ratio_table(document: ResultDocument) -> Table:
    names = ["format codec", "stored", "wire", "duration", "producer CPU", "broker CPU"]
    table = Table("ratios to the same format uncompressed (below 1: less than without a codec)",
                  columns(names, ("format codec",), TIPS))
    baseline = {run.params.get("format"): run for run in document.runs if run.params.get("codec") == "none"}
    for run in document.runs:
        base = baseline.get(run.params.get("format"))
        table.add(label(run), *(ratio(_value(run, key), _value(base, key) if base else None) for key in RATIO_KEYS))
    return table


def _value(run: Run, key: str) -> float | None:
    if key in ("stored_bytes", "wire_bytes"):
        return run.counters.get(key)
    if key == "duration_s":
        return run.duration_s
    return run.resources.get(key)


def winners(document: ResultDocument) -> list[str]:
    runs = [run for run in document.runs if measured(run)]
    return [f"{title}: {label(min(runs, key=lambda run: objective(run, name)))}" for title, name in OBJECTIVES.items()
            if runs]


def headline(document: ResultDocument) -> str:
    stored = [r for r in document.runs if "stored_bytes" in r.counters]
    smallest = min(stored, key=lambda r: r.counters["stored_bytes"], default=None)
    return (f"smallest {smallest.params['format']} {smallest.params['codec']}: "
            f"{smallest.counters['stored_bytes'] / 1e6:.2f} MB") if smallest else ""


def annotate(document: ResultDocument, entry: dict) -> None:
    """The Pareto mark and the objective values of each run, as the table weighs them, for the chart."""
    for run, mark, run_entry in zip(document.runs, pareto(document), entry["runs"]):
        run_entry["pareto"] = mark
        run_entry["objectives"] = {name: objective(run, name) for name in OBJECTIVES.values()} if mark else None

"""The compression lab's tables: absolute figures, ratios to the same format uncompressed (the seed's two
tables), the Pareto front over stored size, duration and CPU, and the winner of each objective — instead
of summing ratios into one score."""

from __future__ import annotations

from rich.table import Table

from kafkabench.core.results import ResultDocument, Run

OBJECTIVES = {"smallest": "stored_bytes", "fastest": "duration_s", "least CPU": "cpu_s"}


def _label(run: Run) -> str:
    level = run.params.get("level")
    return f"{run.params['format']} {run.params['codec']}" + (f" {level}" if level is not None else "")


def objective(run: Run, name: str) -> float:
    if name == "stored_bytes":
        return run.counters["stored_bytes"]
    if name == "duration_s":
        return run.duration_s
    broker = run.resources.get("broker_cpu_s")
    return (run.resources.get("cpu_s") or 0) + (broker or 0)  # producer + broker where the broker is known


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


def _mb(value: float | None) -> str:
    return "-" if value is None else f"{value / 1e6:.2f}"


def _s(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def absolute_table(document: ResultDocument) -> Table:
    p = document.params
    table = Table(title=f"compression: {p.get('rows')} rows of {p.get('dataset')}, median of {p.get('repeats')} repeat(s) "
                        "(MB = 10^6 bytes; CPU = producer process + broker processes)", title_justify="left")
    for column in ("format codec", "stored MB", "wire MB", "payload MB", "duration s", "producer CPU s", "broker CPU s",
                   "read+decode rows/s", "pareto"):
        table.add_column(column, justify="left" if column == "format codec" else "right")
    worse = dominated(document.runs)
    for index, run in enumerate(document.runs):
        table.add_row(_label(run), _mb(run.counters.get("stored_bytes")), _mb(run.counters.get("wire_bytes")),
                      _mb(run.counters.get("payload_bytes")), _s(run.duration_s), _s(run.resources.get("cpu_s")),
                      _s(run.resources.get("broker_cpu_s")), f"{run.throughput.get('read_rows_per_s', 0):,.0f}",
                      "dominated" if index in worse else "front", style="dim" if index in worse else None)
    return table


def ratio_table(document: ResultDocument) -> Table:
    table = Table(title="ratios to the same format uncompressed (below 1: less than without a codec)", title_justify="left")
    for column in ("format codec", "stored", "wire", "duration", "producer CPU", "broker CPU"):
        table.add_column(column, justify="left" if column == "format codec" else "right")
    baseline = {run.params["format"]: run for run in document.runs if run.params["codec"] == "none"}
    for run in document.runs:
        base = baseline.get(run.params["format"])
        table.add_row(_label(run), *[_ratio(_value(run, key), _value(base, key) if base else None)
                                     for key in ("stored_bytes", "wire_bytes", "duration_s", "cpu_s", "broker_cpu_s")])
    return table


def _value(run: Run, key: str) -> float | None:
    if key in ("stored_bytes", "wire_bytes"):
        return run.counters.get(key)
    if key == "duration_s":
        return run.duration_s
    return run.resources.get(key)


def _ratio(value: float | None, base: float | None) -> str:
    return "-" if value is None or not base else f"{value / base:.2f}"


def winners(document: ResultDocument) -> list[str]:
    lines = []
    for title, name in OBJECTIVES.items():
        if document.runs:
            best = min(document.runs, key=lambda run: objective(run, name))
            lines.append(f"{title}: {_label(best)}")
    return lines

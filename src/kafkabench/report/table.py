"""One model per table, rendered by rich in the terminal (report/terminal.py) and by the HTML template in the
report: a lab builds its tables once, from its result document, and both show the same cells.

A row's kind is "" (a run), "sub" (a metric under its run), "dominated", "reference" (another tool's
figures) or "error"; renderers style them.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Callable

from kafkabench.core.results import ResultDocument, Run


@dataclass
class Column:
    name: str
    numeric: bool = True
    definition: str = ""  # the key of its Definition: the report shows that text on hover


@dataclass
class Row:
    cells: list[str]
    kind: str = ""


@dataclass
class Table:
    title: str
    columns: list[Column]
    rows: list[Row] = field(default_factory=list)

    def add(self, *cells: str, kind: str = "") -> None:
        self.rows.append(Row(list(cells), kind))

    def as_dict(self) -> dict:
        return asdict(self)


@dataclass
class Screen:
    """What a watch shows per interval: the table a terminal keeps updated in place, and the lines a log (a file, a
    pipe) gets instead: a line per change and a summary now and then, so most intervals have none."""

    table: Table
    lines: list[str] = field(default_factory=list)


def columns(names: list[str], text: tuple[str, ...] = (), tips: dict[str, str] | None = None) -> list[Column]:
    """Columns named `names`; those in `text` hold words (left-aligned), `tips` maps a name to its definition's key."""
    tips = tips or {}
    return [Column(name, name not in text, tips.get(name, "")) for name in names]


# ---- cell formats, the same in every table ----------------------------------------------------------

def ms(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value:.2f}" if value < 100 else f"{value:.0f}"


def fixed(value: float | None, digits: int = 2) -> str:
    return "-" if value is None else f"{value:,.{digits}f}"


def mb(value: float | None) -> str:
    """10^6 bytes."""
    return "-" if value is None else f"{value / 1e6:.2f}"


def ratio(value: float | None, base: float | None) -> str:
    return "-" if value is None or not base else f"{value / base:.2f}"


def stat(run: Run, metric: str, name: str) -> float | None:
    found = run.stats.get(metric)
    return getattr(found, name) if found else None


def runs_table(document: ResultDocument, label: Callable[[Run], str]) -> Table:
    """Any lab: each run's latencies, rate and duration, so a new lab is never left out of a report."""
    metrics = list(dict.fromkeys(metric for run in document.runs for metric in run.stats))
    names = ["run", "scenario", *(f"{m} {p}" for m in metrics for p in ("p50", "p99")), "records/s", "duration s"]
    table = Table(f"{document.lab}: latencies in ms", columns(names, ("run", "scenario"), {"duration s": "duration_s"}))
    for run in document.runs:
        table.add(label(run), run.scenario, *(ms(stat(run, m, f)) for m in metrics for f in ("p50_ms", "p99_ms")),
                  fixed(run.throughput.get("records_per_s"), 0), fixed(run.duration_s or None),  # never an unmeasured 0
                  kind="error" if run.error else "")
    return table

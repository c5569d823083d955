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
    wide: bool = False  # a terminal shows it only with --wide; the HTML report and the CSV show every column


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
    """What a watch shows per interval: the tables a terminal keeps updated in place, and the lines a log (a file, a
    pipe) gets instead: a line per change and a summary now and then, so most intervals have none."""

    tables: list[Table]
    lines: list[str] = field(default_factory=list)


def columns(names: list[str], text: tuple[str, ...] = (), tips: dict[str, str] | None = None,
            wide: tuple[str, ...] = ()) -> list[Column]:
    """Columns named `names`; those in `text` hold words (left-aligned), `tips` maps a name to its definition's key,
    those in `wide` are shown in a terminal only with --wide."""
    tips = tips or {}
    return [Column(name, name not in text, tips.get(name, ""), name in wide) for name in names]


def split_settings(rows: list[dict[str, str]]) -> tuple[list[str], str]:
    """The defining settings of a table's rows: those that differ between rows (their columns, in order), and
    those every row shares, in words for the title ("RF 3, ISR 2"), so a table shows every setting and spends
    columns only on the ones that vary."""
    names = list(dict.fromkeys(name for row in rows for name in row))
    varying = [name for name in names if len({row.get(name, "-") for row in rows}) > 1]
    shared = ", ".join(f"{name} {rows[0][name]}" for name in names if name not in varying and rows[0].get(name))
    return varying, shared


def settings_text(params: dict) -> str:
    """A producer's acks and compression as it ran them, each with where its value came from (", acks -1 (the
    client's default), compression lz4 (--compression)"), for a title; "" for a result that did not record them."""
    sources = params.get("sources", {})
    return "".join(f", {name} {params[name]} ({sources[name]})" for name in ("acks", "compression") if name in sources)


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

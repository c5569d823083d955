"""Table models (report/table.py) as rich tables for the terminal, and a streaming run's window lines."""

from __future__ import annotations

from rich.table import Table as RichTable

from kafkabench.report.table import Table

ROW_STYLES = {"error": "red", "sub": "dim", "dominated": "dim", "reference": "cyan"}


def render(table: Table, wide: bool = False) -> RichTable:
    """The table for a terminal: without `wide`, its wide columns left out (each lab keeps the others within
    100 columns)."""
    shown = [index for index, column in enumerate(table.columns) if wide or not column.wide]
    rich = RichTable(title=table.title, title_justify="left")
    for index in shown:
        column = table.columns[index]
        rich.add_column(column.name, justify="right" if column.numeric else "left")
    for row in table.rows:
        rich.add_row(*(row.cells[index] for index in shown), style=ROW_STYLES.get(row.kind))
    return rich


def window_line(role: str, entry) -> str:
    metric = "publish" if entry.metric == "publish_latency" else "e2e"
    latency = (f"{metric} p50 {entry.p50_ms:.2f} ms p99 {entry.p99_ms:.2f} ms" if entry.p50_ms is not None
               else f"{metric} -")
    errors = f"  errors {entry.errors}" if entry.errors else ""
    return (f"{role:8} t={entry.t_s:7.1f}s  {entry.records_per_s:>11,.0f} rec/s  {entry.mb_per_s:>8.2f} MB/s  "
            f"{latency}{errors}")

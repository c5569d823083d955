"""Every lab's terminal tables fit 100 columns without a cut header or a wrapped row, rendered from real result
documents (tests/fixtures/results: made by the labs on this project's machine, see the README there). --wide
tables may be wider; the HTML report and the CSV always carry every column."""

from pathlib import Path

import pytest
from rich.console import Console

from kafkabench.core.results import read_result
from kafkabench.labs import registry
from kafkabench.report.table import Column, Table
from kafkabench.report.terminal import render

RESULTS = Path(__file__).parents[2] / "fixtures" / "results"
WIDTH = 100


def too_wide(table: Table, width: int = WIDTH) -> str | None:
    """Why the table would not fit `width` columns as a terminal shows it; None when it fits. A table whose natural
    width (every header and cell on one line) is within `width` is never cut nor wrapped by rich."""
    natural = Console(width=10_000).measure(render(table)).maximum
    return f"{table.title[:60]!r} needs {natural} columns, more than {width}" if natural > width else None


def documents() -> list[Path]:
    return sorted(RESULTS.glob("*/result.json"))


@pytest.mark.parametrize("path", documents(), ids=lambda path: path.parent.name)
def test_every_table_of_a_real_result_fits_100_columns(path):
    document = read_result(path.parent)
    tables = [table for table in registry.for_report(document.lab).tables(document) if table is not None]
    assert tables, f"{path}: no table"
    assert [problem for table in tables if (problem := too_wide(table))] == []


def test_every_lab_has_a_real_result_here():
    covered = {read_result(path.parent).lab for path in documents()}
    assert {lab.name for lab in registry.labs()} <= covered


def test_a_table_too_wide_is_caught_and_wide_columns_are_left_out_unless_asked():
    names = [f"a long header {i}" for i in range(8)]
    table = Table("t", [Column(name, wide=i >= 4) for i, name in enumerate(names)])
    table.add(*[f"{i}" * 12 for i in range(8)])
    assert too_wide(table) is None  # four columns of about 17
    assert [c.header for c in render(table).columns] == names[:4]
    assert [c.header for c in render(table, wide=True).columns] == names
    wide = Table("t", [Column(name) for name in names], table.rows)
    assert "needs 145 columns" in too_wide(wide)


def test_the_monitor_live_tables_fit_with_their_longest_cells():
    """The monitor's window tables are drawn live, not from a result: their widest states, figures and lags fit."""
    from kafkabench.labs.monitor.report import window_tables

    broker = {"lost": 99, "failed": 99, "duplicated": 99, "out_of_order": 99, "availability": 0.5,
              "roundtrip_p50_ms": 59_999.9, "roundtrip_p99_ms": 59_999.9, "state": "not answering",
              "state_for_s": 7_000.0}
    window = {"t_s": 864_000.5, "brokers": {str(1000 + i): broker for i in range(3)},
              "groups": {"a-consumer-group-with-a-long-name-0123": {
                  "lag": 12_345_678_901, "lag_seconds": 864_000.9, "lag_seconds_at_least": True, "status": "WARNING",
                  "members": 128}},
              "parts": {"prober": {"state": "restarting", "restarts": 12_345}}}
    assert [problem for table in window_tables(window) if (problem := too_wide(table))] == []

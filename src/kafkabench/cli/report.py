"""`kafkabench report DIR...`: the HTML report (charts, tables, environment, definitions) and a CSV of every
run, rendered from result files only."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer
from rich.markup import escape

from kafkabench.cli.output import abort, note, out

HTML_NAME = "report.html"
CSV_NAME = "report.csv"


def report(
    paths: list[Path] = typer.Argument(..., help="Result directories, or directories holding them (searched recursively)."),
    html: Optional[Path] = typer.Option(None, "--html", help=f"Write the HTML report here; default: {HTML_NAME} in the first DIR."),
    csv: Optional[Path] = typer.Option(None, "--csv", help=f"Write one CSV row per run here; default: {CSV_NAME} in the first DIR."),
) -> None:
    """Render results into one offline HTML file with charts, and a CSV: nothing is run, only files are read."""
    from kafkabench.report.html import write_report  # plotly and jinja load only when a report is written

    first = paths[0]
    if html is None and csv is None:  # neither asked for: both, beside the results
        if not first.is_dir():
            abort(f"{first}: no such directory")
        html, csv = first / HTML_NAME, first / CSV_NAME
    written_html, written_csv = write_report(paths, html, csv)
    if written_html is not None:
        out.print(f"report: {escape(str(written_html))}", highlight=False)
        note(f"{written_html.stat().st_size / 1e6:.1f} MB, self-contained: opens offline in any current browser")
    if written_csv is not None:
        out.print(f"csv: {escape(str(written_csv))}", highlight=False)

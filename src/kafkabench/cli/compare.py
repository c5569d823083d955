"""`kafkabench compare A B`: what changed from A (baseline) to B, metric by metric, and whether it is beyond
noise, every metric of the comparison judged together; with --fail-on-regression, an exit code CI can act on.
`kafkabench compare RUN --confirm`: the verdicts of a plan's cost table run again on fresh data."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from kafkabench.cli import common
from kafkabench.cli.output import abort, err, note, out
from kafkabench.cli.verdicts import row
from kafkabench.report.compare import CONFIDENCE, MIN_EFFECT_PCT, CompareError, Comparison, RunComparison, \
    compare_paths
from kafkabench.report.family import chance_text
from kafkabench.report.omb import compare_omb, is_omb_baseline
from kafkabench.report.verdict import MetricChange, pct_text

def run_table(run: RunComparison) -> Table:
    table = Table(title=f"{escape(run.label)}: {run.a_samples} vs {run.b_samples} repeat(s), Harrell-Davis medians",
                  title_justify="left")
    for column in ("metric", "A", "B", "change %", f"{CONFIDENCE:.0%} CI %", "p", "q", "verdict", "why"):
        table.add_column(column, justify="left" if column in ("metric", "verdict", "why") else "right")
    for change in run.metrics:
        table.add_row(*row(change))
    return table


def _summary(comparison: Comparison) -> str:
    kinds = ("regression", "improvement", "within noise", "cannot decide", "noise unknown")
    counts = {v: len(comparison.with_verdict(v)) for v in kinds}
    return (f"{counts['regression']} regression(s), {counts['improvement']} improvement(s), "
            f"{counts['within noise']} within noise, {counts['cannot decide']} cannot decide, "
            f"{counts['noise unknown']} noise unknown across {len(comparison.matched)} matched run(s) "
            f"(A: {comparison.a_documents} result(s), B: {comparison.b_documents}; q < {comparison.fdr:g}, "
            f"{CONFIDENCE:.0%} bootstrap CI excluding 0 and a change of at least {comparison.min_effect_pct:g} %); "
            + chance_text(comparison.family, comparison.fdr))


def _show(comparison: Comparison, console: Console) -> None:
    for run in comparison.matched:
        console.print(run_table(run))
        if run.note:
            console.print(escape(run.note), style="yellow", highlight=False)
    for line in comparison.only_a:
        console.print(f"only in A: {escape(line)}", highlight=False)
    for line in comparison.only_b:
        console.print(f"only in B: {escape(line)}", highlight=False)
    for line in comparison.skipped:
        note(f"skipped failed run: {line}")
    console.print(escape(_summary(comparison)), highlight=False)


def _unmatched_error(comparison: Comparison) -> str:
    return (f"no run in {comparison.a} matches a run in {comparison.b} ({len(comparison.only_a)} vs "
            f"{len(comparison.only_b)} distinct runs); runs match on plan cell (or lab), client, scenario and parameters")


def compare(
    a: Path = typer.Argument(..., help="Baseline: a result directory or a run directory holding many; with --confirm, a plan's run directory."),
    b: Optional[Path] = typer.Argument(None, help="Candidate, compared against A."),
    fail_on_regression: Optional[float] = typer.Option(None, "--fail-on-regression", min=0, metavar="PCT",
                                                       help="Exit 1 when a regression beyond noise is worse by at least PCT %."),
    min_effect: float = typer.Option(MIN_EFFECT_PCT, "--min-effect", min=0, metavar="PCT",
                                     help="Smaller changes are never called a regression or improvement."),
    as_json: bool = typer.Option(False, "--json", help="Print the comparison as JSON on stdout."),
    metric: Optional[list[str]] = typer.Option(None, "--metric", metavar="PATTERN", help="Compare only the metrics matching this pattern (e.g. 'stats.e2e.p*', repeatable): a smaller family needs fewer repeats to call a change."),
    fdr: float = common.FdrOption,
    confirm: bool = typer.Option(False, "--confirm", help="A is a plan's run directory: run the cells behind its cost table's verdicts again, on fresh data, and say which replicated (needs a cluster, as `kafkabench run` does)."),
    bootstrap_servers: Optional[str] = common.BootstrapOption,
) -> None:
    """Compare results B against baseline A, metric by metric, telling change from noise using the repeats."""
    common.check_fdr(fdr)
    if confirm:
        if b is not None:
            abort("--confirm takes one plan's run directory (its cost table's verdicts are run again), not two")
        from kafkabench.cli.run import confirm_directory

        return confirm_directory(a, fdr, bootstrap_servers)
    if b is None:
        abort("compare needs two result directories, A (the baseline) and B")
    try:
        if is_omb_baseline(a):  # a published OpenMessaging Benchmark run, held against B's OMB result files
            comparison = compare_omb(a, b, min_effect, fdr, metrics=metric or None)
        else:
            comparison = compare_paths(a, b, min_effect_pct=min_effect, fdr=fdr, metrics=metric or None)
    except CompareError as exc:
        abort(str(exc))
    console = err if as_json else out
    if not comparison.matched:
        for side, lines in (("A", comparison.only_a), ("B", comparison.only_b)):
            for line in lines:
                note(f"only in {side}: {line}")
        abort(_unmatched_error(comparison))
    _show(comparison, console)
    if as_json:
        out.print_json(comparison.model_dump_json())
    failing = comparison.failing(fail_on_regression) if fail_on_regression is not None else []
    if failing:
        err.print(f"[bold red]failed:[/] {len(failing)} regression(s) worse by >= {fail_on_regression:g} %: "
                  f"{escape(_named(failing))}", highlight=False)
        raise typer.Exit(1)


def _named(failing: list[tuple[RunComparison, MetricChange]]) -> str:
    by_run: dict[str, list[str]] = {}
    for run, change in failing:
        by_run.setdefault(run.label, []).append(f"{change.metric} {pct_text(change.change_pct)} %")
    return "; ".join(f"{label}: {', '.join(metrics)}" for label, metrics in by_run.items())

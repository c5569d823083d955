"""`kafkabench compare A B`: what changed from A (baseline) to B, metric by metric, and whether it is beyond
noise; with --fail-on-regression, an exit code CI can act on."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Optional

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from kafkabench.cli.output import abort, err, note, out
from kafkabench.report.compare import ALPHA, CONFIDENCE, MIN_EFFECT_PCT, CompareError, Comparison, MetricChange, \
    RunComparison, compare_paths
from kafkabench.report.profile_cost import ProfileCost

VERDICT_STYLE = {"regression": "bold red", "improvement": "green", "within noise": "dim", "noise unknown": "yellow",
                 "unavailable": "dim"}


def _number(value: float | None) -> str:
    if value is None:
        return "unavailable"
    if abs(value) >= 1000:
        return f"{value:,.0f}"
    return f"{value:.2f}" if abs(value) >= 1 or value == 0 else f"{value:.3g}"


def _pct(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{'+' if value > 0 else '-'}inf" if math.isinf(value) else f"{value:+.1f}"


def _p(value: float | None) -> str:
    return "-" if value is None else "<0.001" if value < 0.001 else f"{value:.3f}"


def _row(change: MetricChange) -> list[str]:
    interval = "-" if change.ci_low_pct is None else f"[{_pct(change.ci_low_pct)}, {_pct(change.ci_high_pct)}]"
    verdict = f"[{VERDICT_STYLE[change.verdict]}]{change.verdict}[/]"
    return [change.metric, _number(change.a_median), _number(change.b_median), _pct(change.change_pct), interval,
            _p(change.p_value), verdict, escape(change.reason)]


def run_table(run: RunComparison) -> Table:
    table = Table(title=f"{escape(run.label)}: {run.a_samples} vs {run.b_samples} repeat(s), medians",
                  title_justify="left")
    for column in ("metric", "A", "B", "change %", f"{CONFIDENCE:.0%} CI %", "p", "verdict", "why"):
        table.add_column(column, justify="left" if column in ("metric", "verdict", "why") else "right")
    for change in run.metrics:
        table.add_row(*_row(change))
    return table


def cost_table(costs: list[ProfileCost]) -> Table:
    """Each profile against the plan's baseline profile: one row per scenario, client and metric; a change beyond
    noise is what the profile costs (or gains), where `compare` would call it a regression (or improvement)."""
    baseline = costs[0].baseline
    table = Table(title=f"cost against the {escape(baseline)} profile: medians of the repeats", title_justify="left")
    for column in ("scenario", "client", "profile", "n", "metric", baseline, "profile value", "change %",
                   f"{CONFIDENCE:.0%} CI %", "p", "verdict"):
        table.add_column(column, justify="right" if column in ("n", baseline, "profile value", "change %", "p") else "left")
    for cost in costs:
        for index, change in enumerate(cost.metrics):
            first = index == 0
            metric, a, b, change_pct, interval, p, verdict, _why = _row(change)
            verdict = verdict.replace("regression", "costs").replace("improvement", "gains")  # a price, not a bug
            table.add_row(escape(cost.scenario) if first else "", cost.client if first else "",
                          escape(cost.profile) if first else "", f"{cost.samples[0]}/{cost.samples[1]}" if first else "",
                          metric, a, b, change_pct, interval, p, verdict)
    return table


def _summary(comparison: Comparison) -> str:
    counts = {v: len(comparison.with_verdict(v)) for v in ("regression", "improvement", "within noise", "noise unknown")}
    tested = counts["regression"] + counts["improvement"] + counts["within noise"]
    return (f"{counts['regression']} regression(s), {counts['improvement']} improvement(s), "
            f"{counts['within noise']} within noise, {counts['noise unknown']} noise unknown "
            f"across {len(comparison.matched)} matched run(s) "
            f"(A: {comparison.a_documents} result(s), B: {comparison.b_documents}; p < {ALPHA:g}, "
            f"{CONFIDENCE:.0%} bootstrap CI excluding 0 and a change of at least {comparison.min_effect_pct:g} %)"
            + (f"; {tested} metrics tested at p < {ALPHA:g}: up to {tested * ALPHA:.1f} of them may be called changed "
               "by chance alone, so read a lone verdict on a tail (p99, max) with care" if tested * ALPHA >= 0.5 else ""))


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
    a: Path = typer.Argument(..., help="Baseline: a result directory or a run directory holding many."),
    b: Path = typer.Argument(..., help="Candidate, compared against A."),
    fail_on_regression: Optional[float] = typer.Option(None, "--fail-on-regression", min=0, metavar="PCT",
                                                       help="Exit 1 when a regression beyond noise is worse by at least PCT %."),
    min_effect: float = typer.Option(MIN_EFFECT_PCT, "--min-effect", min=0, metavar="PCT",
                                     help="Smaller changes are never called a regression or improvement."),
    as_json: bool = typer.Option(False, "--json", help="Print the comparison as JSON on stdout."),
) -> None:
    """Compare results B against baseline A, metric by metric, telling change from noise using the repeats."""
    try:
        comparison = compare_paths(a, b, min_effect_pct=min_effect)
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
        by_run.setdefault(run.label, []).append(f"{change.metric} {_pct(change.change_pct)} %")
    return "; ".join(f"{label}: {', '.join(metrics)}" for label, metrics in by_run.items())

"""How verdicts print: one metric's change as a row, a plan's cost table with its family's caption, and a
confirmation round's."""

from __future__ import annotations

from rich.markup import escape
from rich.table import Table

from kafkabench.cli.output import note, out
from kafkabench.report.family import chance_text
from kafkabench.report.profile_cost import CostTable
from kafkabench.report.significance import CONFIDENCE
from kafkabench.report.verdict import MetricChange, pct_text

VERDICT_STYLE = {"regression": "bold red", "improvement": "green", "within noise": "dim", "cannot decide": "yellow",
                 "noise unknown": "yellow", "unavailable": "dim"}
CONFIRMED = {True: "[green]replicated[/]", False: "[yellow]not replicated[/]", None: ""}


def number(value: float | None) -> str:
    if value is None:
        return "unavailable"
    if abs(value) >= 1000:
        return f"{value:,.0f}"
    return f"{value:.2f}" if abs(value) >= 1 or value == 0 else f"{value:.3g}"


def p_text(value: float | None) -> str:
    return "-" if value is None else "<0.001" if value < 0.001 else f"{value:.3f}"


def row(change: MetricChange) -> list[str]:
    interval = "-" if change.ci_low_pct is None else f"[{pct_text(change.ci_low_pct)}, {pct_text(change.ci_high_pct)}]"
    verdict = f"[{VERDICT_STYLE[change.verdict]}]{change.verdict}[/]"
    return [change.metric, number(change.a_median), number(change.b_median), pct_text(change.change_pct), interval,
            p_text(change.p_value), p_text(change.q_value), verdict, escape(change.reason)]


def cost_table(table: CostTable, title: str | None = None) -> Table:
    """Each profile against the plan's baseline profile: one row per scenario, client and metric; a change beyond
    noise is what the profile costs (or gains), where `compare` would call it a regression (or improvement). Its
    caption: the family's size and what chance alone would mark in it."""
    baseline = table.baseline
    confirmed = table.confirmation is not None
    grid = Table(title=title or f"cost against the {escape(baseline)} profile: Harrell-Davis medians of the repeats",
                 title_justify="left", caption=escape(chance_text(table.family, table.fdr)), caption_justify="left")
    for column in ("scenario", "client", "profile", "n", "metric", baseline, "value", "change %",
                   f"{CONFIDENCE:.0%} CI %", "p", "q", "verdict", *(("confirmed",) if confirmed else ())):
        grid.add_column(column, justify="right" if column in ("n", baseline, "value", "change %", "p", "q") else "left",
                        overflow="fold", no_wrap=column in ("metric", "n"))
    for cost in table.costs:
        for index, change in enumerate(cost.metrics):
            first = index == 0
            _metric, a, b, change_pct, interval, p, q, verdict, _why = row(change)
            verdict = verdict.replace("regression", "costs").replace("improvement", "gains")  # a price, not a bug
            grid.add_row(escape(cost.scenario) if first else "", cost.client if first else "",
                         escape(cost.profile) if first else "", f"{cost.samples[0]}/{cost.samples[1]}" if first else "",
                         short_metric(change.metric), a, b, change_pct, interval, p, q, verdict,
                         *((CONFIRMED[change.confirmed],) if confirmed else ()))
    return grid


def short_metric(metric: str) -> str:
    """stats.e2e.p50_ms -> e2e p50 ms, stats.publish_latency.p99_ms -> publish p99 ms, throughput.records_per_s ->
    records/s: a cost table's few metrics, readable in a terminal's width."""
    parts = metric.split(".")
    if parts[0] == "stats" and len(parts) == 3:
        return f"{parts[1].removesuffix('_latency')} {parts[2].replace('_ms', ' ms')}"
    return parts[-1].replace("_per_s", "/s").replace("payload_mb", "MB")


def show_cost_table(table: CostTable) -> None:
    out.print(cost_table(table))
    if table.note:
        note(table.note)


def show_confirmation(table: CostTable) -> None:
    """Each verdict of the plan's round against the confirmation round's data alone."""
    fresh = table.confirmation
    out.print(cost_table(fresh, "confirmation round: the verdicts' rows on fresh data alone"))
    called = table.verdicts()
    held = sum(change.confirmed is True for _, change in called)
    note(f"{held} of {len(called)} verdict(s) replicated on fresh data (the same change called again at q < "
         f"{table.fdr:g} among the {fresh.family} re-run rows)" + (f"; {fresh.note}" if fresh.note else ""))

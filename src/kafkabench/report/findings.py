"""A plan's findings for the report: the cost table's verdicts, each marked replicated, not replicated, or not yet
confirmed, under the family's caption; from the run directory's cost.json only."""

from __future__ import annotations

from pathlib import Path

from kafkabench.report.family import chance_text
from kafkabench.report.profile_cost import CostTable, read_costs
from kafkabench.report.table import Table, columns
from kafkabench.report.verdict import pct_text

NAMES = ["scenario", "client", "profile", "metric", "change %", "95 % CI %", "p", "q", "verdict", "confirmation"]
STATUS = {True: "replicated on fresh data", False: "not replicated on fresh data"}


def findings_table(run_dir: Path) -> Table | None:
    """The verdicts of the run's cost table, confirmed ones first; None when it has no cost table."""
    table = read_costs(run_dir)
    if table is None:
        return None
    unconfirmed = f"not confirmed (kafkabench compare {run_dir} --confirm)"
    grid = Table(f"findings: costs called beyond noise against the {table.baseline} profile, "
                 f"{_verdicts_text(table)}; {chance_text(table.family, table.fdr)}",
                 columns(NAMES, ("scenario", "client", "profile", "metric", "verdict", "confirmation")))
    order = {True: 0, None: 1, False: 2}
    for cost, change in sorted(table.verdicts(), key=lambda pair: order[pair[1].confirmed]):
        verdict = "costs" if change.verdict == "regression" else "gains"
        grid.add(cost.scenario, cost.client, cost.profile, change.metric, pct_text(change.change_pct),
                 f"{pct_text(change.ci_low_pct)} to {pct_text(change.ci_high_pct)}", f"{change.p_value:.3g}",
                 f"{change.q_value:.3g}", verdict, STATUS.get(change.confirmed, unconfirmed),
                 kind="dominated" if change.confirmed is False else "")
    return grid


def _verdicts_text(table: CostTable) -> str:
    called = table.verdicts()
    if not called:
        return "none called"
    if table.confirmation is None:
        return f"{len(called)} verdict(s), none re-run yet"
    held = sum(change.confirmed is True for _, change in called)
    return f"{len(called)} verdict(s), {held} replicated in a confirmation round"


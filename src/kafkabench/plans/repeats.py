"""How many tests a plan's cost table will hold, from the plan's shape alone (its cells, each lab's kinds of runs and
their compared metrics), and whether its repeats can decide them: said before a cluster starts."""

from __future__ import annotations

from kafkabench.clients import ALL_CLIENTS, availability
from kafkabench.labs import registry
from kafkabench.plans.cells import Cell
from kafkabench.plans.loading import LoadedPlan
from kafkabench.report.family import decides_text
from kafkabench.report.profile_cost import cost_metrics


def cost_family(loaded: LoadedPlan, cells: list[Cell]) -> int:
    """The cost table's tests: every metric of every client's run, for each profile's cell that has a baseline
    cell beside it."""
    baseline = loaded.plan.baseline_profile
    with_baseline = {cell.name_in_plan for cell in cells if cell.profile == baseline}
    tests = 0
    for cell in cells:
        if cell.repeat != 1 or cell.profile == baseline or cell.name_in_plan not in with_baseline:
            continue
        clients = cell.clients or [c for c in ALL_CLIENTS if availability(c).available]
        runs = registry.get(cell.lab).compared_runs(cell.scenario)
        tests += len(clients) * sum(len(cost_metrics(run)) for run in runs)
    return tests


def repeats_line(loaded: LoadedPlan, cells: list[Cell], fdr: float) -> str | None:
    """What the plan's repeats can decide in its cost table, in one line; None without a cost table."""
    family = cost_family(loaded, cells) if loaded.plan.baseline_profile else 0
    if not family:
        return None
    return decides_text("cost table", family, loaded.plan.repeats, fdr, "set repeats:",
                        "its verdicts will read cannot decide")

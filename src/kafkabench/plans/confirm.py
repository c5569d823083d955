"""A confirmation round: the cells behind every verdict of a plan's cost table, run again with fresh repeats,
interleaved, into the run directory's `confirm/`; and the plan of an earlier run, loaded back for one."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from kafkabench.plans.cells import Cell
from kafkabench.plans.loading import LoadedPlan, PlanError, load_plan
from kafkabench.plans.runner import RUN_FILE
from kafkabench.report.profile_cost import CONFIRM_ROUND, CostTable

CONFIRM_DIR = CONFIRM_ROUND
BUILTIN_SOURCE = "built-in plan "


def confirmation_cells(cells: list[Cell], table: CostTable) -> list[Cell]:
    """Every repeat of each cell a verdict rests on (the scenario under the baseline profile and under the
    verdict's profile, for its client), in the plan's interleaved order, numbered afresh."""
    behind = {(cost.scenario, profile, cost.client) for cost, _ in table.verdicts()
              for profile in (table.baseline, cost.profile)}
    chosen = [cell for cell in cells if any(
        (cell.name_in_plan, cell.profile) == (scenario, profile) and (cell.clients is None or client in cell.clients)
        for scenario, profile, client in behind)]
    return [dataclasses.replace(cell, index=index, round=CONFIRM_ROUND) for index, cell in enumerate(chosen, 1)]


def load_run_plan(directory: Path) -> LoadedPlan:
    """The plan an earlier run ran: the built-in or the file it came from when that still says the same, else the
    copy in the run directory (profiles then come from beside it or are built in)."""
    copy = directory / "plan.yaml"
    if not copy.is_file() or not (directory / RUN_FILE).is_file():
        raise PlanError(f"{directory}: not a plan's run directory (no plan.yaml and {RUN_FILE}); give the directory "
                        "`kafkabench run` wrote")
    source = json.loads((directory / RUN_FILE).read_text()).get("source", "")
    if source.startswith(BUILTIN_SOURCE) or Path(source).is_file():
        loaded = load_plan(source.removeprefix(BUILTIN_SOURCE))
        if loaded.text == copy.read_text():
            return loaded
    return load_plan(str(copy))

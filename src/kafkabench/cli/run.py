"""`kafkabench run PLAN|NAME`: a whole matrix unattended, one overall progress bar, a line per finished
cell, and the report written at the end whatever happened."""

from __future__ import annotations

import contextlib
import dataclasses
from datetime import datetime
from pathlib import Path
from typing import Optional

import typer
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from kafkabench.cli import common
from kafkabench.cli.output import abort, err, note, out
from kafkabench.cluster.target import open_target, variant_target
from kafkabench.core.launcher import Launcher
from kafkabench.core.events import Listener
from kafkabench.core.results import ResultDocument
from kafkabench.labs import registry
from kafkabench.plans.cells import Cell, expand
from kafkabench.plans.loading import builtin_names, load_plan
from kafkabench.plans.runner import CellOutcome, run_plan


class _Bars(Listener):
    """The overall bar (cells) and the current cell's bar; finished cells as lines above them."""

    def __init__(self, bar: Progress, total: int, width: int) -> None:
        self._bar = bar
        self._width = width
        self._overall = bar.add_task("cells", total=total)
        self._cell = bar.add_task("", total=None)
        self._total = total
        self._seen: set[str] = set()

    def note(self, message: str) -> None:
        if message not in self._seen:  # the same "set max.request.size=..." for every repeat says nothing new
            self._seen.add(message)
            self._bar.console.print(f"[dim]{escape(message)}[/]", highlight=False)

    def cell_started(self, cell: Cell) -> None:
        self._bar.reset(self._cell, total=None, description=f"{cell.index}/{self._total} {cell.name} r{cell.repeat}")

    def progress(self, done: float, total: float | None, label: str = "") -> None:
        self._bar.update(self._cell, completed=min(done, total) if total else done, total=total)

    def cell_finished(self, cell: Cell, outcome: CellOutcome, document: ResultDocument | None) -> None:
        self._bar.advance(self._overall)
        mark = {"ok": "[green]ok[/]", "interrupted": "[yellow]interrupted[/]"}.get(outcome.status, "[red]failed[/]")
        what = (registry.for_report(document.lab).headline(document) if outcome.status == "ok" and document is not None
                else outcome.error or "")
        label = f"{cell.name} r{cell.repeat}"
        self._bar.console.print(f"{mark} {cell.index:>3}/{self._total} {escape(label.ljust(self._width))} "
                                f"{outcome.duration_s:6.1f} s  {escape(what)}", highlight=False)


def run(
    plan: str = typer.Argument(..., help=f"A plan file (YAML) or a built-in plan: {', '.join(builtin_names())}."),
    out_dir: Optional[Path] = typer.Option(None, "--out", help="Run directory; default: results/run-<plan>-<time>."),
    bootstrap_servers: Optional[str] = common.BootstrapOption,
    dry_run: bool = typer.Option(False, "--dry-run", help="Check the plan and list its cells; run nothing."),
    launcher: Optional[str] = typer.Option(None, "--launcher", help="Where the workers run: local or ray; default: the plan's `launcher:`, else local."),
    ray_address: Optional[str] = common.RayAddressOption,
    spread: Optional[str] = typer.Option(None, "--spread", help="--launcher ray: spread (one worker per node) or pack; default: the plan's."),
    cross_host_e2e: bool = typer.Option(False, "--cross-host-e2e", help="--launcher ray: e2e across nodes' clocks, not within each node; default: the plan's."),
) -> None:
    """Run a plan: its scenarios x clients x profiles, repeated, a result per cell, then the report."""
    loaded = load_plan(plan)
    cells = expand(loaded)  # every cell's settings checked before a cluster is touched
    if dry_run:
        for cell in cells:
            out.print(f"{cell.index:>3} {cell.directory}", highlight=False)
        return
    directory = out_dir or Path("results") / f"run-{loaded.plan.name}-{datetime.now().strftime('%Y%m%d-%H%M%S')}"
    if directory.is_dir() and any(directory.iterdir()):
        abort(f"--out {directory} is not empty: a report of old and new cells mixed would mislead; give a new directory")
    note(f"{loaded.source}: {len(cells)} cells -> {directory}")
    labs = [registry.get(cell.lab) for cell in cells]
    brokers = max(loaded.plan.cluster.brokers, *(lab.brokers_for(cell.scenario) for lab, cell in zip(labs, cells)))
    controllers = max(loaded.plan.cluster.controllers, *(lab.controllers for lab in labs))
    isolated = loaded.plan.cluster.network == "isolated" or any(
        lab.network(cell.scenario) == "isolated" for lab, cell in zip(labs, cells))
    shape = loaded.plan.launcher
    workers = Launcher(launcher or shape.name, ray_address or shape.ray_address, spread or shape.spread,
                       cross_host_e2e or shape.cross_host_e2e)
    variants = {cell.profile: loaded.profiles[cell.profile].variant() for cell in cells}
    own_clusters = any(not variant.is_default for variant in variants.values())  # one per variant, side by side
    if own_clusters and bootstrap_servers:
        profile = next(name for name, variant in variants.items() if not variant.is_default)
        abort(f"profile {profile} sets the brokers' version, settings or JVM options: kafkabench sets them only on "
              "brokers it starts; drop --bootstrap-servers to run the plan on embedded clusters of its own")
    with contextlib.ExitStack() as stack:
        shape = {"brokers": brokers, "controllers": controllers, "security": loaded.plan.cluster.listeners(),
                 "network": "isolated" if isolated else "loopback"}
        targets = {variant: stack.enter_context(variant_target(variant, on_start=note, **shape) if own_clusters
                                                else open_target(bootstrap_servers, on_start=note, **shape))
                   for variant in dict.fromkeys(variants.values())}
        started_by = stack.enter_context(workers.open())
        by_profile = {profile: dataclasses.replace(targets[variant], launcher=started_by)
                      for profile, variant in variants.items()}
        with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                      console=err, transient=True) as bar:
            width = max(len(f"{c.name} r{c.repeat}") for c in cells)
            record = run_plan(loaded, cells, by_profile, directory, _Bars(bar, len(cells), width))
    from kafkabench.report.html import write_report  # plotly and jinja load only when a report is written

    html, csv = write_report([directory], directory / "report.html", directory / "report.csv")
    if loaded.plan.baseline_profile:
        _show_costs(directory, loaded.plan.baseline_profile)
    done = sum(c.status == "ok" for c in record.cells)
    out.print(f"report: {html}", highlight=False)
    note(f"{done} of {len(cells)} cells done; results and {csv.name} in {directory}")
    if record.interrupted:
        abort("interrupted: the cells done so far are kept and in the report", code=130)
    if record.failed:
        failed = [c for c in record.failed if c.status == "failed"]
        abort(f"{len(record.failed)} of {len(cells)} cells did not finish ({', '.join(c.name for c in failed[:3])}"
              f"{'...' if len(failed) > 3 else ''}); see run.json and the report")


def _show_costs(directory: Path, baseline: str) -> None:
    """Each profile's cost against the plan's baseline profile, in the terminal and in cost.json."""
    from kafkabench.cli.compare import cost_table
    from kafkabench.report.profile_cost import profile_costs, write_costs

    costs = profile_costs(directory, baseline)
    if not costs:
        note(f"no cell ran under both the {baseline} profile and another: no cost to show")
        return
    out.print(cost_table(costs))
    too_few = next((cost for cost in costs if cost.note), None)  # the same for every row of a plan: said once
    if too_few is not None:
        note(f"{too_few.scenario} {too_few.client} {too_few.profile}: {too_few.note}")
    note(f"costs: {write_costs(directory, costs)}")

"""`kafkabench run PLAN|NAME`: a whole matrix unattended, one overall progress bar, a line per finished
cell, and the report written at the end whatever happened."""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Optional

import typer
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from kafkabench.cli import common
from kafkabench.cli.output import abort, err, note, out
from kafkabench.core.launcher import Launcher
from kafkabench.core.events import Listener
from kafkabench.core.results import ResultDocument
from kafkabench.labs import registry
from kafkabench.plans.cells import Cell, expand
from kafkabench.plans.confirm import CONFIRM_DIR, confirmation_cells, load_run_plan
from kafkabench.plans.loading import LoadedPlan, builtin_names, load_plan
from kafkabench.plans.repeats import repeats_line
from kafkabench.plans.runner import RUN_FILE, CellOutcome, RunRecord, run_plan
from kafkabench.report.profile_cost import CostTable

if TYPE_CHECKING:
    from kafkabench.cluster.target import Target


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
    fdr: float = common.FdrOption,
    confirm: bool = typer.Option(False, "--confirm", help="Then run the cells behind every cost called beyond noise again, in a fresh interleaved round, and say which replicated."),
) -> None:
    """Run a plan: its scenarios x clients x profiles, repeated, a result per cell, then the report."""
    common.check_fdr(fdr)
    loaded = load_plan(plan)
    cells = expand(loaded)  # every cell's settings checked before a cluster is touched
    if confirm:
        check_confirmable(loaded)
    if line := repeats_line(loaded, cells, fdr):
        note(line)
    if dry_run:
        for cell in cells:
            out.print(f"{cell.index:>3} {cell.directory}", highlight=False)
        return
    directory = out_dir or Path("results") / f"run-{loaded.plan.name}-{datetime.now().strftime('%Y%m%d-%H%M%S')}"
    if directory.is_dir() and any(directory.iterdir()):
        abort(f"--out {directory} is not empty: a report of old and new cells mixed would mislead; give a new directory")
    note(f"{loaded.source}: {len(cells)} cells -> {directory}")
    where = Where(bootstrap_servers, launcher, ray_address, spread, cross_host_e2e)
    record = run_cells(loaded, cells, directory, where)
    from kafkabench.report.html import write_report  # plotly and jinja load only when a report is written

    costs = show_costs(directory, loaded.plan.baseline_profile, fdr) if loaded.plan.baseline_profile else None
    confirmation = None
    if confirm and costs is not None and not record.interrupted:
        confirmation = confirm_costs(loaded, costs, directory, where)
    html, csv = write_report([directory], directory / "report.html", directory / "report.csv")
    done = sum(c.status == "ok" for c in record.cells)
    out.print(f"report: {html}", highlight=False)
    note(f"{done} of {len(cells)} cells done; results and {csv.name} in {directory}")
    if record.interrupted:
        abort("interrupted: the cells done so far are kept and in the report", code=130)
    if record.failed:
        failed = [c for c in record.failed if c.status == "failed"]
        abort(f"{len(record.failed)} of {len(cells)} cells did not finish ({', '.join(c.name for c in failed[:3])}"
              f"{'...' if len(failed) > 3 else ''}); see run.json and the report")
    if confirmation is not None and confirmation.failed:
        abort(f"--confirm: {len(confirmation.failed)} of {len(confirmation.cells)} confirmation cells did not "
              f"finish; see {directory / CONFIRM_DIR / RUN_FILE}")


@dataclasses.dataclass(frozen=True)
class Where:
    """Where a plan's cells run: the cluster (or embedded ones) and the workers' launcher, as given on the command
    line (the plan's own `launcher:` fills what is not)."""
    bootstrap_servers: str | None = None
    launcher: str | None = None
    ray_address: str | None = None
    spread: str | None = None
    cross_host_e2e: bool = False


def run_cells(loaded: LoadedPlan, cells: list[Cell], directory: Path, where: Where) -> RunRecord:
    """The cells, one after another, on the clusters they need (started here when none is given)."""
    from kafkabench.cluster.target import open_target, variant_target  # the clients load when cells run

    labs = [registry.get(cell.lab) for cell in cells]
    brokers = max(loaded.plan.cluster.brokers, *(lab.brokers_for(cell.scenario) for lab, cell in zip(labs, cells)))
    controllers = max(loaded.plan.cluster.controllers, *(lab.controllers for lab in labs))
    isolated = loaded.plan.cluster.network == "isolated" or any(
        lab.network(cell.scenario) == "isolated" for lab, cell in zip(labs, cells))
    shape = loaded.plan.launcher
    workers = Launcher(where.launcher or shape.name, where.ray_address or shape.ray_address,
                       where.spread or shape.spread, where.cross_host_e2e or shape.cross_host_e2e)
    variants = {cell.profile: loaded.profiles[cell.profile].variant() for cell in cells if cell.own_cluster is None}
    own_clusters = any(not variant.is_default for variant in variants.values())  # one per variant, side by side
    if own_clusters and where.bootstrap_servers:
        profile = next(name for name, variant in variants.items() if not variant.is_default)
        abort(f"profile {profile} sets the brokers' version, settings or JVM options: kafkabench sets them only on "
              "brokers it starts; drop --bootstrap-servers to run the plan on embedded clusters of its own")
    if where.bootstrap_servers and (cell := next((c for c in cells if c.own_cluster is not None), None)):
        abort(f"scenario {cell.name_in_plan} runs each cell on a cluster of its own (own_cluster), which only "
              "kafkabench can start: drop --bootstrap-servers, or that scenario")
    with contextlib.ExitStack() as stack:
        shape = {"brokers": brokers, "controllers": controllers, "security": loaded.plan.cluster.listeners(),
                 "network": "isolated" if isolated else "loopback"}
        targets = {variant: stack.enter_context(variant_target(variant, on_start=note, **shape) if own_clusters
                                                else open_target(where.bootstrap_servers, on_start=note, **shape))
                   for variant in dict.fromkeys(variants.values())}
        started_by = stack.enter_context(workers.open())
        by_profile = {profile: dataclasses.replace(targets[variant], launcher=started_by)
                      for profile, variant in variants.items()}

        @contextlib.contextmanager
        def own_cluster(cell: Cell) -> Iterator[Target]:
            with variant_target(cell.own_cluster, on_start=note, **{**shape, "brokers": cell.own_brokers or brokers}) \
                    as target:
                yield dataclasses.replace(target, launcher=started_by)

        with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                      console=err, transient=True) as bar:
            width = max(len(f"{c.name} r{c.repeat}") for c in cells)
            return run_plan(loaded, cells, by_profile, directory, _Bars(bar, len(cells), width), own_cluster)


def show_costs(directory: Path, baseline: str, fdr: float) -> CostTable | None:
    """Each profile's cost against the plan's baseline profile, in the terminal and in cost.json."""
    from kafkabench.cli.verdicts import show_cost_table
    from kafkabench.report.profile_cost import profile_costs, write_costs

    table = profile_costs(directory, baseline, fdr)
    if not table.costs:
        note(f"no cell ran under both the {baseline} profile and another: no cost to show")
        return None
    show_cost_table(table)
    note(f"costs: {write_costs(directory, table)}")
    return table


def check_confirmable(loaded: LoadedPlan) -> None:
    if not loaded.plan.baseline_profile:
        abort(f"--confirm: plan {loaded.plan.name} has no baseline_profile, so no cost table whose verdicts to confirm")
    if loaded.plan.repeats < 2:
        abort(f"--confirm: plan {loaded.plan.name} runs 1 repeat, so its table has no verdicts to confirm; "
              "set repeats: (the note before a run says how many can decide)")


def confirm_costs(loaded: LoadedPlan, table: CostTable, directory: Path, where: Where) -> RunRecord | None:
    """The cells behind every called cost, again, in a fresh interleaved round under DIR/confirm; each verdict marked
    replicated or not, in the terminal and in cost.json."""
    from kafkabench.cli.verdicts import show_confirmation
    from kafkabench.report.profile_cost import confirm, write_costs

    cells = confirmation_cells(expand(loaded), table)
    if not cells:
        note("--confirm: no cost was called beyond noise, so there is nothing to confirm")
        return None
    note(f"--confirm: {len(table.verdicts())} verdict(s) -> {len(cells)} cells again, interleaved, in "
         f"{directory / CONFIRM_DIR}")
    record = run_cells(loaded, cells, directory / CONFIRM_DIR, where)
    show_confirmation(confirm(table, directory))
    note(f"costs and their confirmation: {write_costs(directory, table)}")
    return record


def confirm_directory(directory: Path, fdr: float, bootstrap_servers: str | None) -> None:
    """`kafkabench compare RUN --confirm`: an earlier run's cost table, judged at this --fdr, and its verdicts run
    again; the run's report written anew with them."""
    loaded = load_run_plan(directory)
    check_confirmable(loaded)
    if (directory / CONFIRM_DIR).exists():
        abort(f"{directory / CONFIRM_DIR} exists: this run was confirmed already; move it away to confirm again")
    costs = show_costs(directory, loaded.plan.baseline_profile, fdr)
    confirmation = confirm_costs(loaded, costs, directory, Where(bootstrap_servers)) if costs is not None else None
    from kafkabench.report.html import write_report

    html, _ = write_report([directory], directory / "report.html", directory / "report.csv")
    out.print(f"report: {html}", highlight=False)
    if confirmation is not None and confirmation.failed:
        abort(f"--confirm: {len(confirmation.failed)} of {len(confirmation.cells)} confirmation cells did not "
              f"finish; see {directory / CONFIRM_DIR / RUN_FILE}")

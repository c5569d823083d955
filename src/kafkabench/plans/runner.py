"""Run a plan's cells one after another against one target: a result directory per cell as it finishes,
`run.json` rewritten after every cell, and whatever happens (a failing cell, a dead broker, Ctrl-C) the
cells already done stay done.

A failing cell does not stop the run, unless the cluster stopped answering: then the remaining cells are
marked not run instead of each waiting out its timeout.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import time
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Callable, ContextManager, Iterator

from kafkabench.core.events import Listener
from kafkabench.core.results import RESULT_FILE, ResultDocument, read_result, write_result
from kafkabench.errors import KafkabenchError
from kafkabench.labs import registry
from kafkabench.plans.cells import Cell
from kafkabench.plans.loading import LoadedPlan

if TYPE_CHECKING:
    from kafkabench.cluster.target import Target

RUN_FILE = "run.json"
RUN_SCHEMA = "kafkabench.run/1"


@dataclass
class CellOutcome:
    index: int
    name: str
    directory: str
    status: str = "not run"  # ok, failed, interrupted, not run
    error: str | None = None
    duration_s: float | None = None


@dataclass
class RunRecord:
    plan: str
    source: str
    out_dir: Path
    target: dict
    started_at: str = field(default_factory=lambda: _now())
    finished_at: str | None = None
    cells: list[CellOutcome] = field(default_factory=list)

    @property
    def interrupted(self) -> bool:
        return any(c.status == "interrupted" for c in self.cells)

    @property
    def failed(self) -> list[CellOutcome]:
        return [c for c in self.cells if c.status != "ok"]

    def write(self) -> None:
        document = {"schema": RUN_SCHEMA, **{k: v for k, v in asdict(self).items() if k != "out_dir"}}
        path = self.out_dir / RUN_FILE
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps(document, indent=1) + "\n")
        os.replace(tmp, path)


OwnCluster = Callable[[Cell], ContextManager["Target"]]


def run_plan(loaded: LoadedPlan, cells: list[Cell], targets: Target | dict[str, Target], out_dir: Path,
             listener: Listener, own_cluster: OwnCluster | None = None) -> RunRecord:
    """`targets`: the cluster of every cell, or of each profile's (a profile that makes the broker a variable has a
    cluster of its own); `own_cluster` starts the cluster of a cell whose scenario wants one of its own."""
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "plan.yaml").write_text(loaded.text)
    _keep_profiles(loaded, out_dir)
    shared = [cell for cell in cells if cell.own_cluster is None]
    by_profile = targets if isinstance(targets, dict) else {cell.profile: targets for cell in shared}
    record = RunRecord(loaded.plan.name, loaded.source, out_dir, _clusters(by_profile, len(shared) < len(cells)),
                       cells=[CellOutcome(c.index, c.name, c.directory) for c in cells])
    record.write()
    try:
        with _interrupts() as interrupted:
            for cell, outcome in zip(cells, record.cells):
                cluster = (contextlib.nullcontext(by_profile[cell.profile]) if cell.own_cluster is None
                           else own_cluster(cell))  # type: ignore[misc]  # given wherever a cell wants one
                go_on = _run_one(cell, outcome, loaded, cluster, out_dir, listener)
                if interrupted():  # a lab may have turned Ctrl-C into its own failure: still a stop
                    outcome.status, outcome.error = "interrupted", "interrupted (Ctrl-C)"
                record.write()  # what is done so far, on disk, whatever comes next
                if not go_on or interrupted():
                    break
    finally:
        record.finished_at = _now()
        record.write()
    return record


def _clusters(by_profile: dict[str, Target], own: bool) -> dict:
    """Where the cells ran, for run.json: one cluster, one per profile, and/or one per cell."""
    clusters = {profile: {"kind": t.kind, "bootstrap_servers": t.bootstrap_servers}
                for profile, t in by_profile.items()}
    first = next(iter(clusters.values()), None)
    where = first if all(c == first for c in clusters.values()) else {"kind": "per profile", "profiles": clusters}
    if not own:
        return where
    return {"kind": "own cluster per cell"} if where is None else {**where, "own_cluster_cells": True}


def _run_one(cell: Cell, outcome: CellOutcome, loaded: LoadedPlan, cluster: ContextManager[Target], out_dir: Path,
             listener: Listener) -> bool:
    """Run the cell on `cluster`'s target; False when the run must stop (Ctrl-C, or the shared cluster is gone)."""
    from kafkabench.connection_check import check_connection  # the clients load when a cell runs
    listener.cell_started(cell)
    directory = out_dir / cell.directory
    started = time.perf_counter()
    go_on = True
    try:
        with cluster as target:
            try:
                served, scenario = cell.scenario.against(target)
                check_connection(served.connection)
                registry.get(cell.lab).run(scenario, served, directory, _CellEvents(listener))
                outcome.status = "ok"
            except KafkabenchError as exc:
                outcome.status, outcome.error = "failed", str(exc)
                go_on = cell.own_cluster is not None or _cluster_answers(target)
                if not go_on:
                    listener.note(f"the cluster at {target.bootstrap_servers} no longer answers: the remaining cells "
                                  "are not run")
    except KeyboardInterrupt:
        outcome.status, outcome.error, go_on = "interrupted", "interrupted (Ctrl-C)", False
    except KafkabenchError as exc:  # the cell's own cluster did not start (or stop)
        outcome.status, outcome.error = "failed", outcome.error or f"its own cluster: {exc}"
    outcome.duration_s = round(time.perf_counter() - started, 3)
    document = _stamp(directory, cell, loaded.plan.name)
    listener.cell_finished(cell, outcome, document)
    return go_on


def _keep_profiles(loaded: LoadedPlan, out_dir: Path) -> None:
    """The plan's own profiles beside its copy, so the run directory alone can run its cells again (--confirm)."""
    if loaded.base is None:
        return
    for name in loaded.profiles:
        own = loaded.base / "profiles" / f"{name}.yaml"
        if own.is_file():
            (out_dir / "profiles").mkdir(exist_ok=True)
            shutil.copyfile(own, out_dir / "profiles" / own.name)


@contextlib.contextmanager
def _interrupts() -> Iterator[Callable[[], bool]]:
    """Remember a Ctrl-C, then let it raise KeyboardInterrupt as usual."""
    seen = []

    def handler(signum, frame):
        seen.append(signum)
        previous(signum, frame) if callable(previous) else signal.default_int_handler(signum, frame)

    previous = signal.signal(signal.SIGINT, handler)
    try:
        yield lambda: bool(seen)
    finally:
        signal.signal(signal.SIGINT, previous)


def _stamp(directory: Path, cell: Cell, plan: str) -> ResultDocument | None:
    """Record which plan cell a result belongs to (also a failed cell's partial result)."""
    if not (directory / RESULT_FILE).is_file():
        return None
    document = read_result(directory)
    document.plan = cell.metadata(plan)
    write_result(document, directory)
    return document


def _cluster_answers(target: Target) -> bool:
    from kafkabench.admin import KafkaAdmin

    try:
        with KafkaAdmin(target.connection, timeout_s=10) as admin:
            return bool(admin.brokers())
    except KafkabenchError:
        return False


class _CellEvents(Listener):
    """What a lab reports while it runs, passed on, its progress parts (clients, roles, cells) summed into one
    figure for the cell."""

    def __init__(self, listener: Listener) -> None:
        self._listener = listener
        self._done: dict[str, float] = {}
        self._totals: dict[str, float] = {}

    def note(self, message: str) -> None:
        self._listener.note(message)

    def window(self, role: str, entry) -> None:
        self._listener.window(role, entry)

    def progress(self, done: float, total: float | None, label: str = "") -> None:
        self._done[label] = done
        self._totals[label] = total or 0
        self._listener.progress(sum(self._done.values()), sum(self._totals.values()) or None, "cell")


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")

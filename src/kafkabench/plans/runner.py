"""Run a plan's cells one after another against one target: a result directory per cell as it finishes,
`run.json` rewritten after every cell, and whatever happens (a failing cell, a dead broker, Ctrl-C) the
cells already done stay done.

A failing cell does not stop the run, unless the cluster stopped answering: then the remaining cells are
marked not run instead of each waiting out its timeout.
"""

from __future__ import annotations

import contextlib
import copy
import json
import os
import signal
import tempfile
import time
import uuid
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable, Iterator, Protocol

from kafkabench.admin import KafkaAdmin
from kafkabench.cluster.target import Target
from kafkabench.core.results import RESULT_FILE, ResultDocument, read_result, write_result
from kafkabench.errors import KafkabenchError
from kafkabench.datasets.sources import open_dataset
from kafkabench.labs.compression import CompressionRequest, plan_cells, run_compression
from kafkabench.labs.latency import LatencyRequest, plan_latency, run_latency
from kafkabench.labs.throughput import ThroughputRequest, plan_throughput, run_throughput
from kafkabench.plans.cells import Cell, Silent
from kafkabench.plans.loading import LoadedPlan

RUN_FILE = "run.json"
RUN_SCHEMA = "kafkabench.run/1"


class RunListener(Protocol):
    def note(self, message: str) -> None: ...
    def cell_started(self, cell: Cell) -> None: ...
    def cell_progress(self, cell: Cell, done: float, total: float) -> None: ...
    def cell_finished(self, cell: Cell, outcome: CellOutcome, document: ResultDocument | None) -> None: ...


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


def run_plan(loaded: LoadedPlan, cells: list[Cell], target: Target, out_dir: Path, listener: RunListener) -> RunRecord:
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "plan.yaml").write_text(loaded.text)
    record = RunRecord(loaded.plan.name, loaded.source, out_dir, {"kind": target.kind, "bootstrap_servers": target.bootstrap_servers},
                       cells=[CellOutcome(c.index, c.name, c.directory) for c in cells])
    record.write()
    try:
        with _interrupts() as interrupted:
            for cell, outcome in zip(cells, record.cells):
                go_on = _run_one(cell, outcome, loaded, target, out_dir, listener)
                if interrupted():  # a lab may have turned Ctrl-C into its own failure: still a stop
                    outcome.status, outcome.error = "interrupted", "interrupted (Ctrl-C)"
                if not go_on or interrupted():
                    break
    finally:
        record.finished_at = _now()
        record.write()
    return record


def _run_one(cell: Cell, outcome: CellOutcome, loaded: LoadedPlan, target: Target, out_dir: Path, listener: RunListener) -> bool:
    """Run the cell; False when the run must stop (Ctrl-C, or the cluster is gone)."""
    listener.cell_started(cell)
    directory = out_dir / cell.directory
    started = time.perf_counter()
    go_on = True
    try:
        _run_lab(cell, target, directory, _LabListener(cell, listener))
        outcome.status = "ok"
    except KeyboardInterrupt:
        outcome.status, outcome.error, go_on = "interrupted", "interrupted (Ctrl-C)", False
    except KafkabenchError as exc:
        outcome.status, outcome.error = "failed", str(exc)
        go_on = _cluster_answers(target)
        if not go_on:
            listener.note(f"the cluster at {target.bootstrap_servers} no longer answers: the remaining cells are not run")
    outcome.duration_s = round(time.perf_counter() - started, 3)
    document = _stamp(directory, cell, loaded.plan.name)
    listener.cell_finished(cell, outcome, document)
    return go_on


def _run_lab(cell: Cell, target: Target, directory: Path, listener: _LabListener) -> None:
    request = copy.deepcopy(cell.request)  # a lab may fill in a request (e.g. a new consumer group per run)
    if isinstance(request, LatencyRequest):
        run_latency(plan_latency(request, listener), target, directory, listener)
    elif isinstance(request, CompressionRequest):
        run_compression(request, target, directory, listener)
    elif isinstance(request, ThroughputRequest) and request.role == "consume":
        _run_consume(request, target, directory, listener)
    else:
        run_throughput(plan_throughput(request, listener), target, directory, listener)


def _run_consume(request: ThroughputRequest, target: Target, directory: Path, listener: _LabListener) -> None:
    """Fill a fresh topic with the records to read (that produce run is set-up, not kept), read it, drop it."""
    request.topic = f"kafkabench-plan-{uuid.uuid4().hex[:8]}"
    fill = ThroughputRequest(role="produce", topic=request.topic, size=request.size, count=request.count,
                             partitions=request.partitions, topic_config=request.topic_config, client="confluent",
                             timeout_s=request.timeout_s)
    listener.note(f"filling {request.topic} with {request.count:,} records of {request.size} B to read")
    try:
        with tempfile.TemporaryDirectory(prefix="kafkabench-fill-") as scratch:
            run_throughput(plan_throughput(fill, Silent()), target, Path(scratch), Silent())
        run_throughput(plan_throughput(request, listener), target, directory, listener)
    finally:
        try:
            with KafkaAdmin(target.bootstrap_servers, timeout_s=10) as admin:
                admin.delete_topic(request.topic)
        except KafkabenchError:
            pass


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
    try:
        with KafkaAdmin(target.bootstrap_servers, timeout_s=10) as admin:
            return bool(admin.brokers())
    except KafkabenchError:
        return False


class _LabListener:
    """What every lab reports while it runs, turned into one progress figure for the cell."""

    def __init__(self, cell: Cell, listener: RunListener) -> None:
        self._cell, self._listener = cell, listener
        self._done: dict[str, float] = {}
        self._totals: dict[str, float] = {}

    def note(self, message: str) -> None:
        self._listener.note(message)

    # latency
    def client_ready(self, client: str, version: str) -> None:
        pass

    def progress(self, client: str, done: int, total: int) -> None:
        self._done[client], self._totals[client] = done, total
        self._listener.cell_progress(self._cell, sum(self._done.values()), sum(self._totals.values()))

    # produce / consume
    def window(self, role: str, entry: dict) -> None:
        request = self._cell.request
        self._done[role] = self._done.get(role, 0) + entry["records"]
        if request.count:
            self._listener.cell_progress(self._cell, self._done[role], request.count)
        else:
            self._listener.cell_progress(self._cell, entry["t_s"], request.duration_s)

    def done(self, role: str, records: int) -> None:
        pass

    # compression
    def cell_done(self, cell, repeat: int, summary: dict) -> None:
        request = self._cell.request
        self._done["cells"] = self._done.get("cells", 0) + 1
        total = len(plan_cells(request, open_dataset(request.dataset))) * request.repeats
        self._listener.cell_progress(self._cell, self._done["cells"], total)


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")

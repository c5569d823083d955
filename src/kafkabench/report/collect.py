"""Find result directories, read them, and turn them into the one plain data dict every report renderer
(HTML, CSV) reads, Locust style: no pydantic objects, no rich objects, only what json.dumps takes.

Nothing is skipped silently: a result.json that cannot be read, or a histogram it names that is missing, is
a ReportError naming the file.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass
from datetime import datetime, timezone
from pathlib import Path

from pydantic import ValidationError

from kafkabench import __version__
from kafkabench.core.results import RESULT_FILE, SCHEMA, ResultDocument, Run, read_histogram
from kafkabench.errors import KafkabenchError
from kafkabench.labs import registry
from kafkabench.labs.base import Lab
from kafkabench.report.findings import findings_table
from kafkabench.report.definitions import DEFINITIONS, Definition
from kafkabench.report.table import Table
from kafkabench.report.environment import environment
from kafkabench.report.spectrum import percentile_spectrum

REPORT_SCHEMA = "kafkabench.report/1"
PLAN_RUN_FILE = "run.json"  # what `kafkabench run` writes beside its cells' result directories
PLAN_RUN_SCHEMA = "kafkabench.run/1"
SPECTRUM_MIN_COUNT = 2  # one value (the cold message) is a point, not a distribution


class ReportError(KafkabenchError):
    """Results could not be found or read."""


@dataclass(frozen=True)
class LoadedResult:
    directory: Path
    document: ResultDocument


def find_result_dirs(paths: list[Path]) -> list[Path]:
    """Each path is a result directory or any directory holding result directories (searched recursively)."""
    found: list[Path] = []
    for path in paths:
        if path.is_file() and path.name == RESULT_FILE:
            path = path.parent
        if not path.is_dir():
            raise ReportError(f"{path}: no such directory")
        for root, dirs, files in os.walk(path):
            dirs.sort()  # a stable walk: the same tree gives the same report
            if RESULT_FILE in files:
                found.append(Path(root))
    unique = list(dict.fromkeys(found))
    if not unique:
        raise ReportError(f"no {RESULT_FILE} found under {', '.join(str(p) for p in paths)}; "
                          "give a result directory or a directory that holds some")
    return unique


def load_result(directory: Path) -> LoadedResult:
    path = directory / RESULT_FILE
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ReportError(f"{path}: cannot be read as JSON ({exc})") from exc
    if not isinstance(raw, dict) or raw.get("schema") != SCHEMA:
        found = raw.get("schema") if isinstance(raw, dict) else type(raw).__name__
        raise ReportError(f"{path}: not a {SCHEMA} result (schema: {found})")
    try:
        return LoadedResult(directory, ResultDocument.model_validate(raw))
    except ValidationError as exc:
        first = exc.errors()[0]
        where = " -> ".join(str(part) for part in first["loc"])
        raise ReportError(f"{path}: {where}: {first['msg']}") from exc


def ordered(results: list[LoadedResult]) -> list[LoadedResult]:
    """A plan's cells in the order they first ran, each cell's repeats together; anything else by creation time."""
    first_run: dict[tuple, str] = {}
    for result in results:
        key = _cell_key(result.document)
        first_run[key] = min(first_run.get(key, result.document.created_at), result.document.created_at)

    def sort_key(result: LoadedResult) -> tuple:
        document = result.document
        key = _cell_key(document)
        return first_run[key], key, _repeat(document), document.created_at, str(result.directory)

    return sorted(results, key=sort_key)


def _cell_key(document: ResultDocument) -> tuple:
    plan = document.plan
    return (str(plan.get("plan")), str(plan.get("cell"))) if plan.get("cell") else ("", document.created_at)


def _repeat(document: ResultDocument) -> int:
    repeat = document.plan.get("repeat")
    return repeat if isinstance(repeat, int) else 0


def collect(paths: list[Path]) -> dict:
    """The report's data dict for every result under `paths`."""
    results = ordered([load_result(directory) for directory in find_result_dirs(paths)])
    names = _unique_names(results)
    entries = [result_entry(result, f"r{index + 1}", names[index]) for index, result in enumerate(results)]
    return {
        "schema": REPORT_SCHEMA,
        "generated_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "generated_by": {"name": "kafkabench", "version": __version__},
        "sources": [str(path) for path in paths],
        "labs": list(dict.fromkeys(entry["lab"] for entry in entries)),
        "results": entries,
        "plan_runs": plan_runs(paths),
        "environment": environment([result.document for result in results], [e["id"] for e in entries]),
        "definitions": [{**asdict(d), "labs": list(d.labs)} for d in all_definitions()],
    }


def all_definitions() -> tuple[Definition, ...]:
    """The definitions every lab shares, then each registered lab's own."""
    return DEFINITIONS + tuple(d for lab in registry.labs() for d in lab.definitions)


def table_entry(table: Table) -> dict:
    """A table as the report renders it: each column with its definition's text to show on hover."""
    texts = {d.key: d.text for d in all_definitions()}
    entry = table.as_dict()
    for column in entry["columns"]:
        column["tip"] = texts.get(column.pop("definition"), "")
    return entry


def plan_runs(paths: list[Path]) -> list[dict]:
    """Every plan run under `paths` with its cells that left no complete result (failed, interrupted, not
    run): a report of a plan that stopped early says so instead of showing only what finished."""
    runs = []
    for path in dict.fromkeys(p.parent if p.is_file() else p for p in paths):
        for root, dirs, files in os.walk(path):
            dirs.sort()
            if PLAN_RUN_FILE in files:
                runs.append(_plan_run(Path(root) / PLAN_RUN_FILE))
    return [run for run in runs if run is not None]


def _plan_run(path: Path) -> dict | None:
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ReportError(f"{path}: cannot be read as JSON ({exc})") from exc
    if not isinstance(raw, dict) or raw.get("schema") != PLAN_RUN_SCHEMA:
        return None  # another tool's run.json: not kafkabench's to judge
    cells = [cell for cell in raw.get("cells", []) if isinstance(cell, dict)]
    findings = findings_table(path.parent)
    return {"directory": str(path.parent), "plan": raw.get("plan"), "started_at": raw.get("started_at"),
            "findings": table_entry(findings) if findings else None,
            "finished_at": raw.get("finished_at"), "cells": len(cells),
            "incomplete": [{key: cell.get(key) for key in ("index", "name", "directory", "status", "error")}
                           for cell in cells if cell.get("status") != "ok"]}


def _unique_names(results: list[LoadedResult]) -> list[str]:
    names = [_name(result) for result in results]
    # e.g. two runs both called `latency`: say where each came from
    return [str(result.directory) if names.count(name) > 1 else name for result, name in zip(results, names)]


def _name(result: LoadedResult) -> str:
    plan = result.document.plan
    if plan.get("cell"):
        return f"{plan['cell']} r{plan.get('repeat', 1)}"
    return result.directory.name or str(result.directory)


def result_entry(result: LoadedResult, entry_id: str, name: str) -> dict:
    document = result.document
    lab = registry.for_report(document.lab)
    entry = {
        "id": entry_id,
        "name": name,
        "directory": str(result.directory),
        "lab": document.lab,
        "created_at": document.created_at,
        "command": " ".join(document.command),
        "plan": dict(document.plan),
        "params": dict(document.params),
        "tool": dict(document.tool),
        "machine": dict(document.machine),
        "cluster": dict(document.cluster),
        "notes": list(document.notes),
        "error": document.error,
        "headline": lab.headline(document),
        "lines": lab.lines(document),
        "tables": [table_entry(table) for table in lab.tables(document)],
        "floor_p50_ms": None,
        "spectrum_one_metric": False,
        "runs": [run_entry(result.directory, run, index, lab) for index, run in enumerate(document.runs)],
    }
    lab.annotate(document, entry)
    return entry


def run_entry(directory: Path, run: Run, index: int, lab: Lab) -> dict:
    entry = run.model_dump(mode="json")
    entry["index"] = index
    entry["label"] = lab.run_label(run)
    entry["spectra"] = {metric: percentile_spectrum(_histogram(directory, run, metric))
                        for metric in run.histograms
                        if metric in run.stats and run.stats[metric].count >= SPECTRUM_MIN_COUNT}
    entry["pareto"] = None  # front / dominated: labs that weigh objectives (compression)
    entry["objectives"] = None
    return entry


def _histogram(directory: Path, run: Run, metric: str):
    try:
        return read_histogram(directory, run, metric)
    except (OSError, ValueError) as exc:
        raise ReportError(f"{directory / run.histograms[metric]}: cannot be read as a histogram ({exc})") from exc

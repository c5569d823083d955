"""The result contract (docs/design.md): one directory per run with result.json and the encoded histograms.

Tables, reports and comparisons are rendered from these files only.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from kafkabench.config.redact import scrub_text
from kafkabench.core.histogram import LatencyHistogram, Stat

SCHEMA = "kafkabench.result/1"
RESULT_FILE = "result.json"
HISTOGRAM_DIR = "histograms"


class Run(BaseModel):
    client: str
    client_version: str = ""
    scenario: str
    params: dict[str, Any] = {}
    stats: dict[str, Stat] = {}
    throughput: dict[str, float] = {}
    counters: dict[str, int] = {}
    resources: dict[str, float | None] = {}
    duration_s: float = 0.0
    config: dict[str, dict[str, Any]] = {}  # producer / consumer / topic, effective, secrets redacted
    not_applicable: dict[str, list[str]] = {}  # settings the client has no equivalent for, per role
    timings: dict[str, float] = {}  # e.g. rebalance_s, first_record_s
    timeline: list[dict[str, Any]] = []  # one entry per progress window: t_s, records_per_s, mb_per_s, p50_ms, p99_ms
    reported: dict[str, Any] = {}  # figures another tool printed (Apache's perf tools), kept as it defined them
    histograms: dict[str, str] = {}  # metric -> file under histograms/, relative to the result directory
    workers: list[dict[str, Any]] = []  # one per worker process: where it ran (launcher, Ray node, clock offset) and its counters
    nodes: dict[str, dict[str, Any]] = {}  # Ray node id -> its workers' figures merged (workers, records, throughput, stats)
    error: str | None = None


class ResultDocument(BaseModel):
    schema_: str = Field(SCHEMA, alias="schema")
    lab: str
    created_at: str
    command: list[str] = []
    tool: dict[str, Any] = {}
    machine: dict[str, Any] = {}
    cluster: dict[str, Any] = {}
    params: dict[str, Any] = {}
    plan: dict[str, Any] = {}  # set by `kafkabench run`: plan, cell, scenario, lab, profile, client, repeat
    runs: list[Run] = []
    notes: list[str] = []
    error: str | None = None

    model_config = {"populate_by_name": True}

    def to_json(self) -> str:
        """Scrubbed of every secret this process read: a client's error text can quote a password or a key."""
        return scrub_text(self.model_dump_json(by_alias=True, indent=1))


def stats_from(histograms: dict[str, LatencyHistogram]) -> dict[str, Stat]:
    stats = {}
    for metric, histogram in histograms.items():
        summary = histogram.summary()
        if summary is not None:
            stats[metric] = summary
    return stats


def write_result(document: ResultDocument, directory: Path, encoded: list[dict[str, str] | None] | None = None) -> Path:
    """Write result.json and, for run i, encoded[i] (metric -> HdrHistogram base64) under histograms/;
    a run without an entry (or None) keeps the histogram files it already has."""
    directory.mkdir(parents=True, exist_ok=True)
    (directory / HISTOGRAM_DIR).mkdir(exist_ok=True)
    for index, (run, histograms) in enumerate(zip(document.runs, encoded or [])):
        if histograms is None:
            continue
        run.histograms = {}
        for metric, blob in histograms.items():
            relative = f"{HISTOGRAM_DIR}/{index:02d}-{run.client}-{metric}.hdr"
            (directory / relative).write_text(blob + "\n")
            run.histograms[metric] = relative
    path = directory / RESULT_FILE
    tmp = path.with_suffix(f".{os.getpid()}.tmp")
    tmp.write_text(document.to_json() + "\n")
    os.replace(tmp, path)
    return path


def read_result(directory: Path) -> ResultDocument:
    return ResultDocument.model_validate(json.loads((directory / RESULT_FILE).read_text()))


def read_histogram(directory: Path, run: Run, metric: str) -> LatencyHistogram:
    return LatencyHistogram.decode((directory / run.histograms[metric]).read_text().strip())


def move_histograms(runs: list[Run], source: Path, directory: Path, first: int) -> None:
    """Runs written into a scratch directory join `directory`'s result: their histogram files move under names no
    later run reuses (run `first`, `first + 1`, ...); a file that was never written leaves its entry out."""
    (directory / HISTOGRAM_DIR).mkdir(parents=True, exist_ok=True)
    for index, run in enumerate(runs, start=first):
        for metric, relative in list(run.histograms.items()):
            kept = f"{HISTOGRAM_DIR}/{index:03d}-{run.client}-{metric}.hdr"
            if (source / relative).exists():
                shutil.move(source / relative, directory / kept)
                run.histograms[metric] = kept
            else:
                del run.histograms[metric]

"""`kafkabench compare` with OpenMessaging Benchmark results: a published OMB run (its result files, as OMB writes
them) as the baseline, against the OMB result files `kafkabench omb` writes, workload by workload (OMB's `workload`
name), with the same noise test as every comparison where both sides have repeats (several files of a workload).

The metrics are OMB's own headline figures: the mean of the per-window publish and consume rates, and the
aggregated publish, publish-delay and end-to-end percentiles. kafkabench's end-to-end latency runs from each
record's intended send time, in microseconds; OMB's from the record's millisecond timestamp, samples at or below
0 ms dropped: the comparison says so rather than pretend they are one definition."""

from __future__ import annotations

import fnmatch
import json
from collections import defaultdict
from pathlib import Path

from kafkabench.report.compare import CompareError, Comparison, RunComparison, compare_metric
from kafkabench.report.family import judge_family, repeats_note
from kafkabench.report.significance import SEED

OMB_KEYS = ("publishRate", "aggregatedPublishLatency99pct", "workload")
METRICS = (("publishRate", "mean", "higher"), ("consumeRate", "mean", "higher"),
           ("publishErrorRate", "mean", "lower"),
           ("aggregatedPublishLatency50pct", None, "lower"), ("aggregatedPublishLatency99pct", None, "lower"),
           ("aggregatedPublishDelayLatency99pct", None, "lower"),
           ("aggregatedEndToEndLatency50pct", None, "lower"), ("aggregatedEndToEndLatency99pct", None, "lower"))
E2E_NOTE = ("end-to-end latency: kafkabench's from the intended send time, in microseconds; OMB's from the record's "
            "millisecond timestamp, samples at or below 0 ms dropped")


def omb_files(path: Path) -> list[Path]:
    """The OMB result files at `path` (one, or every one under a directory)."""
    candidates = [path] if path.is_file() else sorted(path.rglob("*.json")) if path.is_dir() else []
    return [file for file in candidates if file.name != "result.json" and _is_omb(file)]


def is_omb_baseline(path: Path) -> bool:
    """An OMB result file, or a directory of them that holds no kafkabench result."""
    if path.is_file():
        return _is_omb(path)
    return path.is_dir() and not any(path.rglob("result.json")) and bool(omb_files(path))


def _is_omb(file: Path) -> bool:
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
    except (OSError, ValueError, UnicodeDecodeError):
        return False
    return isinstance(data, dict) and all(key in data for key in OMB_KEYS)


def compare_omb(a: Path, b: Path, min_effect_pct: float, fdr: float, seed: int = SEED,
                metrics: list[str] | None = None):
    a_files, b_files = omb_files(a), omb_files(b)
    if not b_files:
        raise CompareError(f"{b}: no OMB result files under it; `kafkabench omb WORKLOAD.yaml --out {b}` writes them "
                           "beside its own result")
    a_samples, b_samples = _by_workload(a_files), _by_workload(b_files)
    matched = []
    for workload in (name for name in a_samples if name in b_samples):
        a_runs, b_runs = a_samples[workload], b_samples[workload]
        changes = [compare_metric(name, better, [_value(r, name, how) for r in a_runs],
                                  [_value(r, name, how) for r in b_runs], min_effect_pct, seed)
                   for name, how, better in METRICS
                   if metrics is None or any(fnmatch.fnmatchcase(name, pattern) for pattern in metrics)]
        drivers = [*sorted({r.get("driver", "?") for r in a_runs}), "->",
                   *sorted({r.get("driver", "?") for r in b_runs})]
        matched.append(RunComparison(label=f"{workload} ({' '.join(drivers)})", group="omb", client="omb",
                                     scenario="omb", params={"workload": workload}, a_samples=len(a_runs),
                                     b_samples=len(b_runs), note=None, metrics=changes))
    family = judge_family([change for run in matched for change in run.metrics], fdr, min_effect_pct)
    for run in matched:
        run.note = "; ".join(filter(None, (repeats_note(run.a_samples, run.b_samples, family, fdr), E2E_NOTE)))
    return Comparison(a=str(a), b=str(b), a_documents=len(a_files), b_documents=len(b_files),
                      min_effect_pct=min_effect_pct, fdr=fdr, family=family, seed=seed, matched=matched,
                      only_a=[f"{name} ({len(runs)} in A)" for name, runs in a_samples.items()
                              if name not in b_samples],
                      only_b=[f"{name} ({len(runs)} in B)" for name, runs in b_samples.items()
                              if name not in a_samples],
                      skipped=[])


def _by_workload(files: list[Path]) -> dict[str, list[dict]]:
    samples: dict[str, list[dict]] = defaultdict(list)
    for file in files:
        data = json.loads(file.read_text(encoding="utf-8"))
        samples[str(data["workload"])].append(data)
    return dict(samples)


def _value(result: dict, name: str, how: str | None) -> float | None:
    value = result.get(name)
    if how == "mean":
        return sum(value) / len(value) if value else None
    return float(value) if isinstance(value, (int, float)) else None

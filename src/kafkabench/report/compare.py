"""Compare two sets of results metric by metric: what changed from A (baseline) to B, and whether the change
is beyond noise.

Runs are matched by a key (plan cell or lab, client, scenario, parameters); the documents sharing a key (a
plan's repeats) are that key's samples. Per metric: the medians (Harrell-Davis estimates, see
report.significance), the relative change of the medians, a seeded percentile-bootstrap confidence interval of
that change, and a permutation-test p-value of the difference of medians. A change is called only when the test,
the interval and the effect size all agree; the metrics of one comparison are a family, judged together
(report.family: q-values, "cannot decide").
Reads result files only.
"""

from __future__ import annotations

import fnmatch
import json
from collections import defaultdict
from pathlib import Path
from typing import NamedTuple

import numpy as np
from pydantic import BaseModel, ConfigDict, ValidationError

from kafkabench.core.results import RESULT_FILE, ResultDocument, Run, read_result
from kafkabench.errors import KafkabenchError
from kafkabench.report.family import judge_family, repeats_note
from kafkabench.report.significance import ALPHA, CONFIDENCE, RESAMPLES, SEED, Statistic, bootstrap_interval, \
    harrell_davis, permutation_p, relative_change, repeats_for
from kafkabench.report.verdict import Better, MetricChange, Verdict

MIN_EFFECT_PCT = 5.0

# parameters that differ between repeats of the same work, or do not change the work: not part of the key
VOLATILE_PARAMS = frozenset({"payload_sha256", "topic", "group", "command", "records_file", "timeout_s",
                             "idle_timeout_s", "records"})
THROUGHPUT = ("records_per_s", "payload_mb_per_s", "read_rows_per_s")
COUNTERS = ("stored_bytes", "wire_bytes")
ERROR_LIKE = ("error", "fail", "lost", "duplicat", "reorder", "timeout", "out_of_range", "negative", "unstamped")
RESOURCES = ("cpu_s", "broker_cpu_s", "max_rss_mb")


class CompareError(KafkabenchError):
    """The results to compare cannot be read or do not fit together."""


class RunComparison(BaseModel):
    model_config = ConfigDict(ser_json_inf_nan="strings")

    label: str
    group: str  # plan cell, else lab
    client: str
    scenario: str
    params: dict
    a_samples: int
    b_samples: int
    note: str | None  # e.g. too few repeats to call anything
    metrics: list[MetricChange]


class Comparison(BaseModel):
    model_config = ConfigDict(ser_json_inf_nan="strings")

    a: str
    b: str
    a_documents: int
    b_documents: int
    min_effect_pct: float
    alpha: float = ALPHA  # the raw threshold, for how many rows chance alone marks
    fdr: float = ALPHA  # the false discovery rate across every metric of every matched run
    family: int = 0  # how many of them were tested
    confidence: float = CONFIDENCE
    resamples: int = RESAMPLES
    seed: int = SEED
    matched: list[RunComparison]
    only_a: list[str]
    only_b: list[str]
    skipped: list[str]  # runs that failed, kept out of the samples

    def with_verdict(self, verdict: Verdict) -> list[tuple[RunComparison, MetricChange]]:
        return [(run, m) for run in self.matched for m in run.metrics if m.verdict == verdict]

    def failing(self, pct: float) -> list[tuple[RunComparison, MetricChange]]:
        """Regressions worse by at least pct percent (a regression from a zero baseline always is)."""
        return [(run, m) for run, m in self.with_verdict("regression") if m.worse_by_pct >= pct]


class Key(NamedTuple):
    group: str
    client: str
    scenario: str
    params: str  # canonical JSON, volatile entries dropped
    occurrence: int  # the n-th run with this key in one document: one document gives one sample per key


# ---- loading and matching ----

def load_documents(path: Path) -> list[tuple[Path, ResultDocument]]:
    """Every result under path (a result directory, a run directory of many, or a result.json)."""
    if path.is_file() and path.name == RESULT_FILE:
        path = path.parent
    if not path.is_dir():
        raise CompareError(f"{path}: no such directory; give a result directory or a run directory")
    files = sorted(path.rglob(RESULT_FILE))
    if not files:
        raise CompareError(f"{path}: no {RESULT_FILE} under it; give a result directory or a run directory")
    documents = []
    for file in files:
        try:
            documents.append((file.parent, read_result(file.parent)))
        except (ValueError, ValidationError) as exc:  # json.JSONDecodeError is a ValueError
            raise CompareError(f"{file}: not a readable result ({type(exc).__name__}); remove it or fix it") from exc
    return documents


def _canonical(params: dict) -> str:
    return json.dumps({k: v for k, v in params.items() if k not in VOLATILE_PARAMS}, sort_keys=True, default=str)


def collect_samples(documents: list[tuple[Path, ResultDocument]]) -> tuple[dict[Key, list[Run]], list[str]]:
    """Runs grouped by key; failed runs are left out and named."""
    samples: dict[Key, list[Run]] = defaultdict(list)
    skipped = []
    for directory, document in documents:
        group = document.plan.get("cell") or document.lab
        seen: dict[tuple, int] = defaultdict(int)
        for run in document.runs:
            if run.error:
                skipped.append(f"{directory}: {run.client} {run.scenario} failed ({run.error})")
                continue
            base = (group, run.client, run.scenario, _canonical(run.params))
            samples[Key(*base, seen[base])].append(run)
            seen[base] += 1
    return dict(samples), skipped


def labels(keys: list[Key]) -> dict[Key, str]:
    """group client scenario, plus the parameters that tell keys of the same kind apart."""
    kinds: dict[tuple, list[dict]] = defaultdict(list)
    for key in keys:
        kinds[key[:3]].append(json.loads(key.params))
    out = {}
    for key in keys:
        siblings = kinds[key[:3]]
        params = json.loads(key.params)
        differing = [k for k in sorted(params) if any(s.get(k) != params[k] for s in siblings)]
        text = " ".join([*key[:3], *(f"{k}={params[k]}" for k in differing)])
        out[key] = text + (f" #{key.occurrence + 1}" if key.occurrence else "")
    return out


# ---- metrics ----

def metric_values(run: Run) -> dict[str, tuple[float | None, Better]]:
    """The compared metrics of one run with the direction that is better; None stays None (unavailable)."""
    values: dict[str, tuple[float | None, Better]] = {}
    for name, stat in run.stats.items():
        values[f"stats.{name}.p50_ms"] = (stat.p50_ms, "lower")
        values[f"stats.{name}.p99_ms"] = (stat.p99_ms, "lower")
    for name in THROUGHPUT:
        if name in run.throughput:
            values[f"throughput.{name}"] = (run.throughput[name], "higher")
    for name, count in run.counters.items():
        if name in COUNTERS or any(word in name for word in ERROR_LIKE):
            values[f"counters.{name}"] = (count, "lower")
    for name in RESOURCES:
        if name in run.resources:
            values[f"resources.{name}"] = (run.resources[name], "lower")
    if not run.params.get("duration_s"):  # a time-bounded run lasts as long as it was told to: nothing to compare
        values["duration_s"] = (run.duration_s, "lower")
    return values


def _metric_table(runs: list[Run]) -> dict[str, tuple[list[float | None], Better]]:
    table: dict[str, tuple[list[float | None], Better]] = {}
    for run in runs:
        for name, (value, better) in metric_values(run).items():
            table.setdefault(name, ([], better))[0].append(value)
    return table


# ---- statistics ----

def compare_metric(metric: str, better: Better, a_values: list[float | None], b_values: list[float | None],
                   min_effect_pct: float = MIN_EFFECT_PCT, seed: int = SEED,
                   statistic: Statistic = harrell_davis) -> MetricChange:
    """One metric's verdict alone (a family of one). `statistic`: the median estimate of its figures, interval and
    test (the sample median only to measure what Harrell-Davis changes)."""
    a = np.array([v for v in a_values if v is not None], dtype=float)
    b = np.array([v for v in b_values if v is not None], dtype=float)
    change = MetricChange(metric=metric, better=better, a_n=len(a), b_n=len(b),
                          a_median=float(statistic(a)) if len(a) else None,
                          b_median=float(statistic(b)) if len(b) else None, change_pct=None, ci_low_pct=None,
                          ci_high_pct=None, p_value=None, verdict="unavailable", reason="")
    if not len(a) or not len(b):
        change.reason = "unavailable in " + ("A and B" if not len(a) and not len(b) else "A" if not len(a) else "B")
        return change
    change.change_pct = float(relative_change(change.a_median, change.b_median)) * 100
    if min(len(a), len(b)) < 2:
        change.verdict = "noise unknown"
        change.reason = f"{len(a)} vs {len(b)} samples; needs >= {repeats_for(1)} per side"
        return change
    low, high = bootstrap_interval(a, b, seed, statistic=statistic)
    change.ci_low_pct, change.ci_high_pct = low * 100, high * 100
    if np.ptp(np.concatenate([a, b])) == 0:  # the same in every repeat: no permutation moves it, nothing to test
        change.verdict, change.reason = "within noise", "the same in every repeat"
        return change
    change.p_value = permutation_p(a, b, seed, statistic=statistic)
    judge_family([change], ALPHA, min_effect_pct)  # alone, a family of one; a table of them is judged again together
    return change


def compare_runs(a_runs: list[Run], b_runs: list[Run], min_effect_pct: float = MIN_EFFECT_PCT,
                 seed: int = SEED) -> list[MetricChange]:
    a_table, b_table = _metric_table(a_runs), _metric_table(b_runs)
    names = [*a_table, *(name for name in b_table if name not in a_table)]
    changes = []
    for name in names:
        better = (a_table.get(name) or b_table[name])[1]
        a_values = a_table[name][0] if name in a_table else []
        b_values = b_table[name][0] if name in b_table else []
        changes.append(compare_metric(name, better, a_values, b_values, min_effect_pct, seed))
    return changes


def compare_paths(a: Path, b: Path, min_effect_pct: float = MIN_EFFECT_PCT, seed: int = SEED,
                  fdr: float = ALPHA, metrics: list[str] | None = None) -> Comparison:
    """Every matched run's metrics (those matching a `metrics` pattern, when given), judged together as one family at
    false discovery rate `fdr`: the fewer tested, the fewer repeats a call needs."""
    a_documents, b_documents = load_documents(a), load_documents(b)
    check_same_plan(a, a_documents, b, b_documents)
    a_samples, a_skipped = collect_samples(a_documents)
    b_samples, b_skipped = collect_samples(b_documents)
    names = labels([*a_samples, *(key for key in b_samples if key not in a_samples)])
    matched = []
    for key in (key for key in a_samples if key in b_samples):
        a_runs, b_runs = a_samples[key], b_samples[key]
        changes = compare_runs(a_runs, b_runs, min_effect_pct, seed)
        matched.append(RunComparison(
            label=names[key], group=key.group, client=key.client, scenario=key.scenario,
            params=json.loads(key.params), a_samples=len(a_runs), b_samples=len(b_runs), note=None,
            metrics=[c for c in changes if metrics is None or any(fnmatch.fnmatchcase(c.metric, m) for m in metrics)]))
    if metrics is not None:
        compared = {c.metric for run in matched for c in run.metrics}
        for pattern in metrics:
            if not any(fnmatch.fnmatchcase(name, pattern) for name in compared):
                raise CompareError(f"--metric {pattern}: matches none of the compared metrics (e.g. stats.e2e.p50_ms, "
                                   "throughput.records_per_s; `compare --json` lists them all)")
    family = judge_family([change for run in matched for change in run.metrics], fdr, min_effect_pct)
    for run in matched:
        run.note = repeats_note(run.a_samples, run.b_samples, family, fdr)
    return Comparison(
        a=str(a), b=str(b), a_documents=len(a_documents), b_documents=len(b_documents), min_effect_pct=min_effect_pct,
        fdr=fdr, family=family, seed=seed, matched=matched,
        only_a=[f"{names[k]} ({len(runs)} in A)" for k, runs in a_samples.items() if k not in b_samples],
        only_b=[f"{names[k]} ({len(runs)} in B)" for k, runs in b_samples.items() if k not in a_samples],
        skipped=[f"A {line}" for line in a_skipped] + [f"B {line}" for line in b_skipped])


def plans_of(documents: list[tuple[Path, ResultDocument]]) -> set[str]:
    return {document.plan["plan"] for _, document in documents if document.plan.get("plan")}


def check_same_plan(a: Path, a_documents: list[tuple[Path, ResultDocument]], b: Path,
                    b_documents: list[tuple[Path, ResultDocument]]) -> None:
    """A comparison of two plans' runs matches only the cells their names share by accident: refused."""
    a_plans, b_plans = plans_of(a_documents), plans_of(b_documents)
    for side, plans in ((a, a_plans), (b, b_plans)):
        if len(plans) > 1:
            raise CompareError(f"{side}: results of {len(plans)} plans ({', '.join(sorted(plans))}) mixed; give one "
                               "plan's run directory a side")
    if a_plans and b_plans and a_plans != b_plans:
        raise CompareError(f"{a} ran plan {min(a_plans)} and {b} plan {min(b_plans)}: compare two runs of the same "
                           "plan (the same cells on either side)")

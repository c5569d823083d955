"""Compare two sets of results metric by metric: what changed from A (baseline) to B, and whether the change
is beyond noise.

Runs are matched by a key (plan cell or lab, client, scenario, parameters); the documents sharing a key (a
plan's repeats) are that key's samples. Per metric: the medians, the relative change of the medians, a
seeded percentile-bootstrap confidence interval of that change, and a permutation-test p-value of the
difference of medians. A change is called only when the test, the interval and the effect size all agree.
Reads result files only.
"""

from __future__ import annotations

import functools
import itertools
import json
import math
from collections import defaultdict
from pathlib import Path
from typing import Literal, NamedTuple

import numpy as np
from pydantic import BaseModel, ConfigDict, ValidationError

from kafkabench.core.results import RESULT_FILE, ResultDocument, Run, read_result
from kafkabench.errors import KafkabenchError

ALPHA = 0.05
CONFIDENCE = 0.95
RESAMPLES = 10_000
SEED = 20_240_601  # fixed: the same files always give the same interval and p-value
EXACT_LIMIT = 20_000  # label assignments enumerated exactly up to this many (8 vs 8 is 12,870)
MIN_EFFECT_PCT = 5.0

# parameters that differ between repeats of the same work, or do not change the work: not part of the key
VOLATILE_PARAMS = frozenset({"payload_sha256", "topic", "group", "command", "records_file", "timeout_s",
                             "idle_timeout_s", "records"})
THROUGHPUT = ("records_per_s", "payload_mb_per_s", "read_rows_per_s")
COUNTERS = ("stored_bytes", "wire_bytes")
ERROR_LIKE = ("error", "fail", "lost", "duplicat", "reorder", "timeout", "out_of_range", "negative", "unstamped")
RESOURCES = ("cpu_s", "broker_cpu_s", "max_rss_mb")

Better = Literal["lower", "higher"]
Verdict = Literal["regression", "improvement", "within noise", "noise unknown", "unavailable"]


class CompareError(KafkabenchError):
    """The results to compare cannot be read or do not fit together."""


class MetricChange(BaseModel):
    # a change from a zero baseline is infinite: JSON carries it as "Infinity", never as a made-up number
    model_config = ConfigDict(ser_json_inf_nan="strings")

    metric: str  # its path in a run, e.g. stats.e2e.p50_ms
    better: Better
    a_n: int  # samples with a value; None (unavailable) is not a sample
    b_n: int
    a_median: float | None
    b_median: float | None
    change_pct: float | None  # (median B - median A) / |median A| * 100
    ci_low_pct: float | None  # bootstrap interval of change_pct
    ci_high_pct: float | None
    p_value: float | None  # permutation test of median B - median A, two-sided
    verdict: Verdict
    reason: str  # why this verdict, in a few words

    @property
    def worse_by_pct(self) -> float:
        """How much worse B is, in percent (negative when better)."""
        if self.change_pct is None:
            return 0.0
        return self.change_pct if self.better == "lower" else -self.change_pct


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
    alpha: float = ALPHA
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

def relative_change(a_median: np.ndarray | float, b_median: np.ndarray | float) -> np.ndarray:
    """(B - A) / |A|; from a zero baseline: 0 when B is zero too, else +-inf (no division by zero)."""
    a, b = np.asarray(a_median, dtype=float), np.asarray(b_median, dtype=float)
    diff = b - a
    fallback = np.where(diff == 0, 0.0, np.copysign(np.inf, diff))
    with np.errstate(over="ignore"):  # a change from a baseline near zero is rightly infinite
        return np.divide(diff, np.abs(a), out=fallback, where=a != 0)


def bootstrap_interval(a: np.ndarray, b: np.ndarray, seed: int = SEED, resamples: int = RESAMPLES,
                       confidence: float = CONFIDENCE) -> tuple[float, float]:
    """Percentile bootstrap of the relative change of medians, each side resampled on its own."""
    rng = np.random.default_rng(seed)
    a_medians = np.median(a[rng.integers(0, len(a), (resamples, len(a)))], axis=1)
    b_medians = np.median(b[rng.integers(0, len(b), (resamples, len(b)))], axis=1)
    tail = (1 - confidence) / 2 * 100
    # no interpolation between resamples: two infinite ones (zero baseline) would give inf - inf = nan
    low, high = np.percentile(relative_change(a_medians, b_medians), [tail, 100 - tail], method="inverted_cdf")
    return float(low), float(high)


def median_interval(values: list[float], seed: int = SEED, resamples: int = RESAMPLES,
                    confidence: float = CONFIDENCE) -> tuple[float, float] | None:
    """Percentile bootstrap of one sample's median (a cell's repeats). None below two values: one value has
    no spread to resample, and any interval drawn around it would be made up. With few values it is wide
    by nature: the median of 3 or 5 resampled repeats is often their lowest or highest."""
    sample = np.asarray(values, dtype=float)
    if len(sample) < 2:
        return None
    rng = np.random.default_rng(seed)
    medians = np.median(sample[rng.integers(0, len(sample), (resamples, len(sample)))], axis=1)
    tail = (1 - confidence) / 2 * 100
    low, high = np.percentile(medians, [tail, 100 - tail], method="inverted_cdf")
    return float(low), float(high)


@functools.lru_cache(maxsize=64)
def _all_assignments(total: int, size: int) -> np.ndarray:
    """Every way to label `size` of `total` pooled samples A: rows of indexes, the A ones first."""
    chosen = np.array(list(itertools.combinations(range(total), size)), dtype=np.intp).reshape(-1, size)
    mask = np.zeros((len(chosen), total), dtype=bool)
    mask[np.arange(len(chosen))[:, None], chosen] = True
    rest = np.nonzero(~mask)[1].reshape(len(chosen), total - size)
    order = np.hstack([chosen, rest])
    order.flags.writeable = False  # shared through the cache
    return order


def _assignments(total: int, size: int, seed: int, resamples: int) -> tuple[np.ndarray, bool]:
    """Label assignments to try, and whether they are all of them (exact) or a seeded random subset."""
    if math.comb(total, size) <= EXACT_LIMIT:
        return _all_assignments(total, size), True
    rng = np.random.default_rng(seed)
    return np.argsort(rng.random((resamples, total)), axis=1), False


def permutation_p(a: np.ndarray, b: np.ndarray, seed: int = SEED, resamples: int = RESAMPLES) -> float:
    """Two-sided p-value of median(B) - median(A) under exchangeable labels."""
    pooled = np.concatenate([a, b])
    observed = abs(float(np.median(b) - np.median(a)))
    order, exact = _assignments(len(pooled), len(a), seed, resamples)
    values = pooled[order]
    stats = np.abs(np.median(values[:, len(a):], axis=1) - np.median(values[:, :len(a)], axis=1))
    # rounding in the medians must not turn a tie into "less extreme"
    extreme = int(np.count_nonzero(stats >= observed * (1 - 1e-9)))
    return extreme / len(stats) if exact else (extreme + 1) / (len(stats) + 1)


@functools.lru_cache(maxsize=256)
def smallest_p(a_n: int, b_n: int) -> float:
    """The p-value of two completely separated samples of these sizes: the lowest this test gives. Not
    1 / assignments: swapping values of A above its median with values of B below its median leaves both
    medians alone, so those labellings tie with the observed one (4 vs 4 cannot go below 4/70)."""
    return permutation_p(np.arange(a_n, dtype=float), np.arange(b_n, dtype=float) + a_n)


def repeats_needed(alpha: float = ALPHA) -> int:
    """Fewest repeats per side for which the test can reach p < alpha at all."""
    n = 2
    while smallest_p(n, n) >= alpha:
        n += 1
    return n


def _judge(better: Better, a_n: int, b_n: int, change_pct: float, low_pct: float, high_pct: float, p: float,
           min_effect_pct: float) -> tuple[Verdict, str]:
    """A call needs all three: the test (p), the interval (excludes 0) and the size of the change."""
    if smallest_p(a_n, b_n) >= ALPHA:
        return "within noise", f"too few repeats ({a_n} vs {b_n})"
    if p >= ALPHA:
        return "within noise", f"p >= {ALPHA:g}"
    if low_pct <= 0 <= high_pct:
        return "within noise", "CI includes 0"
    if abs(change_pct) < min_effect_pct:
        return "within noise", f"change < {min_effect_pct:g} %"
    worse = change_pct > 0 if better == "lower" else change_pct < 0
    return ("regression" if worse else "improvement"), f"p < {ALPHA:g}, CI excludes 0, change >= {min_effect_pct:g} %"


def compare_metric(metric: str, better: Better, a_values: list[float | None], b_values: list[float | None],
                   min_effect_pct: float = MIN_EFFECT_PCT, seed: int = SEED) -> MetricChange:
    a = np.array([v for v in a_values if v is not None], dtype=float)
    b = np.array([v for v in b_values if v is not None], dtype=float)
    change = MetricChange(metric=metric, better=better, a_n=len(a), b_n=len(b),
                          a_median=float(np.median(a)) if len(a) else None,
                          b_median=float(np.median(b)) if len(b) else None, change_pct=None, ci_low_pct=None,
                          ci_high_pct=None, p_value=None, verdict="unavailable", reason="")
    if not len(a) or not len(b):
        change.reason = "unavailable in " + ("A and B" if not len(a) and not len(b) else "A" if not len(a) else "B")
        return change
    change.change_pct = float(relative_change(change.a_median, change.b_median)) * 100
    if min(len(a), len(b)) < 2:
        change.verdict = "noise unknown"
        change.reason = f"{len(a)} vs {len(b)} samples; needs >= {repeats_needed()} per side"
        return change
    low, high = bootstrap_interval(a, b, seed)
    change.ci_low_pct, change.ci_high_pct = low * 100, high * 100
    change.p_value = permutation_p(a, b, seed)
    change.verdict, change.reason = _judge(better, len(a), len(b), change.change_pct, change.ci_low_pct,
                                           change.ci_high_pct, change.p_value, min_effect_pct)
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


def repeats_note(a_n: int, b_n: int) -> str | None:
    """Why nothing for this key can be called, when the sample counts alone decide it."""
    needed = repeats_needed()
    if min(a_n, b_n) < 2:
        return (f"{a_n} vs {b_n} repeats: noise unknown; run at least {needed} repeats on each side "
                "to tell a change from noise")
    if smallest_p(a_n, b_n) >= ALPHA:
        return (f"{a_n} vs {b_n} repeats: too few to tell, the permutation test cannot go below p = "
                f"{smallest_p(a_n, b_n):.2f}, so no change here can be called beyond noise; "
                f"run at least {needed} repeats on each side")
    return None


def compare_paths(a: Path, b: Path, min_effect_pct: float = MIN_EFFECT_PCT, seed: int = SEED) -> Comparison:
    a_documents, b_documents = load_documents(a), load_documents(b)
    a_samples, a_skipped = collect_samples(a_documents)
    b_samples, b_skipped = collect_samples(b_documents)
    names = labels([*a_samples, *(key for key in b_samples if key not in a_samples)])
    matched = []
    for key in (key for key in a_samples if key in b_samples):
        a_runs, b_runs = a_samples[key], b_samples[key]
        matched.append(RunComparison(
            label=names[key], group=key.group, client=key.client, scenario=key.scenario,
            params=json.loads(key.params), a_samples=len(a_runs), b_samples=len(b_runs),
            note=repeats_note(len(a_runs), len(b_runs)), metrics=compare_runs(a_runs, b_runs, min_effect_pct, seed)))
    return Comparison(
        a=str(a), b=str(b), a_documents=len(a_documents), b_documents=len(b_documents), min_effect_pct=min_effect_pct,
        seed=seed, matched=matched,
        only_a=[f"{names[k]} ({len(runs)} in A)" for k, runs in a_samples.items() if k not in b_samples],
        only_b=[f"{names[k]} ({len(runs)} in B)" for k, runs in b_samples.items() if k not in a_samples],
        skipped=[f"A {line}" for line in a_skipped] + [f"B {line}" for line in b_skipped])

"""What each profile of a plan costs against its baseline profile (the security-cost plan: TLS and SASL_SSL against
plaintext), from the run's result files only.

The same scenario and client under two profiles are two samples, one per repeat; they are compared with
`compare`'s statistics (medians, the bootstrap interval of the relative change, the permutation test), and the
table's rows are one family: a cost is called only when its q-value across the table is below the false
discovery rate, and "cannot decide" where the plan's repeats could not have called one.

A confirmation round (`kafkabench run PLAN --confirm`) runs the cells behind every called cost again; its
documents are stamped `round: confirm` and judged apart, as a family of their own, on the verdicts' rows only.
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from kafkabench.core.results import Run
from kafkabench.report.compare import MIN_EFFECT_PCT, compare_runs, load_documents
from kafkabench.report.family import FDR, judge_family, repeats_note
from kafkabench.report.verdict import MetricChange

# what a person asks of a profile, per kind of run: latency at the middle and the tail, and throughput (MB/s is
# records/s times a scenario's fixed record size: the same test twice, left out of the family)
COST_METRICS = {
    "ping_pong": ("stats.e2e.p50_ms", "stats.e2e.p99_ms"),  # its records/s is one over its latency
    "produce": ("stats.publish_latency.p50_ms", "stats.publish_latency.p99_ms", "throughput.records_per_s"),
    "consume": ("stats.e2e.p50_ms", "stats.e2e.p99_ms", "throughput.records_per_s"),
}
OTHER_RUNS = ("stats.e2e.p50_ms", "stats.e2e.p99_ms", "stats.publish_latency.p50_ms", "stats.publish_latency.p99_ms",
              "throughput.records_per_s")
COST_FILE = "cost.json"
CONFIRM_ROUND = "confirm"
VERDICTS = ("regression", "improvement")


def cost_metrics(run: str) -> tuple[str, ...]:
    """The metrics a cost table compares for a kind of run (a worker's scenario: ping_pong, produce, consume)."""
    return COST_METRICS.get(run, OTHER_RUNS)


class ProfileCost(BaseModel):
    model_config = ConfigDict(ser_json_inf_nan="strings")

    scenario: str  # the plan's scenario name
    client: str
    run: str  # the run's own scenario (ping_pong, produce, consume)
    profile: str
    baseline: str
    samples: tuple[int, int]  # repeats of the baseline, of the profile
    metrics: list[MetricChange]

    def key(self, metric: str) -> tuple[str, str, str, str, str]:
        return self.scenario, self.client, self.run, self.profile, metric


class CostTable(BaseModel):
    """A plan's cost table: its rows judged together at `fdr`."""
    model_config = ConfigDict(ser_json_inf_nan="strings")

    baseline: str
    fdr: float
    family: int  # the rows with a test
    note: str | None  # when the repeats alone decide that nothing can be called
    costs: list[ProfileCost]
    confirmation: CostTable | None = None  # the confirmation round's rows, judged on its data alone

    def verdicts(self) -> list[tuple[ProfileCost, MetricChange]]:
        return [(cost, change) for cost in self.costs for change in cost.metrics if change.verdict in VERDICTS]


def profile_costs(run_dir: Path, baseline: str, fdr: float = FDR, min_effect_pct: float = MIN_EFFECT_PCT,
                  confirm_round: bool = False, only: set[tuple] | None = None) -> CostTable:
    """Every (scenario, client, run) that ran under `baseline` and another profile, that profile against it, in the
    plan's own round or the confirmation round; `only`: the (scenario, client, run, profile, metric) rows kept."""
    groups: dict[tuple[str, str, str], dict[str, list[Run]]] = defaultdict(lambda: defaultdict(list))
    for _, document in load_documents(run_dir):
        plan = document.plan
        if not plan.get("profile") or (plan.get("round") == CONFIRM_ROUND) != confirm_round:
            continue
        for run in document.runs:
            if not run.error:
                groups[(plan["scenario"], run.client, run.scenario)][plan["profile"]].append(run)
    costs = []
    for (scenario, client, run), by_profile in groups.items():
        base = by_profile.get(baseline)
        if not base:
            continue
        wanted = cost_metrics(run)
        for profile, runs in by_profile.items():
            if profile == baseline:
                continue
            cost = ProfileCost(scenario=scenario, client=client, run=run, profile=profile, baseline=baseline,
                               samples=(len(base), len(runs)), metrics=[])
            changes = {c.metric: c for c in compare_runs(base, runs, min_effect_pct) if c.metric in wanted}
            cost.metrics = [changes[m] for m in wanted if m in changes and (only is None or cost.key(m) in only)]
            if cost.metrics:
                costs.append(cost)
    family = judge_family([change for cost in costs for change in cost.metrics], fdr, min_effect_pct)
    fewest = min((cost.samples for cost in costs), key=min, default=(0, 0))
    return CostTable(baseline=baseline, fdr=fdr, family=family, costs=costs,
                     note=repeats_note(*fewest, family, fdr) if costs else None)


def confirm(table: CostTable, run_dir: Path, min_effect_pct: float = MIN_EFFECT_PCT) -> CostTable:
    """Each verdict of the plan's round judged again on the confirmation round's data alone, as a family of the
    verdicts' rows: it replicated when the new data call the same change (the same direction, q below the false
    discovery rate, the interval and the effect). Marks the verdicts in place."""
    called = {cost.key(change.metric): change for cost, change in table.verdicts()}
    again = profile_costs(run_dir, table.baseline, table.fdr, min_effect_pct, confirm_round=True, only=set(called))
    fresh = {cost.key(change.metric): change for cost in again.costs for change in cost.metrics}
    for key, change in called.items():
        change.confirmed = key in fresh and fresh[key].verdict == change.verdict
    table.confirmation = again
    return table


def write_costs(run_dir: Path, table: CostTable) -> Path:
    path = run_dir / COST_FILE
    path.write_text(table.model_dump_json(indent=1) + "\n")
    return path


def read_costs(run_dir: Path) -> CostTable | None:
    """The run's cost table; None without one, or from a kafkabench before the family rule (a bare list of rows,
    each judged alone: not findings to show as such)."""
    path = run_dir / COST_FILE
    if not path.is_file():
        return None
    raw = json.loads(path.read_text())
    return CostTable.model_validate(raw) if isinstance(raw, dict) else None

"""What each profile of a plan costs against its baseline profile (the security-cost plan: TLS and SASL_SSL against
plaintext), from the run's result files only.

The same scenario and client under two profiles are two samples, one per repeat; they are compared with
`compare`'s statistics (medians, the bootstrap interval of the relative change, the permutation test), so a
cost is called only when it is beyond the noise of the repeats.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from kafkabench.core.results import Run
from kafkabench.report.compare import MetricChange, compare_runs, load_documents, repeats_note

# what a person asks of a security (or any) profile: latency at the middle and the tail, and throughput
COST_METRICS = ("stats.e2e.p50_ms", "stats.e2e.p99_ms", "stats.publish_latency.p50_ms", "stats.publish_latency.p99_ms",
                "throughput.records_per_s", "throughput.payload_mb_per_s")
COST_FILE = "cost.json"


class ProfileCost(BaseModel):
    model_config = ConfigDict(ser_json_inf_nan="strings")

    scenario: str  # the plan's scenario name
    client: str
    run: str  # the run's own scenario (ping_pong, produce, consume)
    profile: str
    baseline: str
    samples: tuple[int, int]  # repeats of the baseline, of the profile
    note: str | None
    metrics: list[MetricChange]


def profile_costs(run_dir: Path, baseline: str) -> list[ProfileCost]:
    """Every (scenario, client, run) that ran under `baseline` and another profile, that profile against it."""
    groups: dict[tuple[str, str, str], dict[str, list[Run]]] = defaultdict(lambda: defaultdict(list))
    for _, document in load_documents(run_dir):
        plan = document.plan
        if not plan.get("profile"):
            continue
        for run in document.runs:
            if not run.error:
                groups[(plan["scenario"], run.client, run.scenario)][plan["profile"]].append(run)
    costs = []
    for (scenario, client, run), by_profile in groups.items():
        base = by_profile.get(baseline)
        if not base:
            continue
        for profile, runs in by_profile.items():
            if profile == baseline:
                continue
            order = {name: index for index, name in enumerate(COST_METRICS)}
            changes = sorted((c for c in compare_runs(base, runs) if c.metric in order), key=lambda c: order[c.metric])
            costs.append(ProfileCost(scenario=scenario, client=client, run=run, profile=profile, baseline=baseline,
                                     samples=(len(base), len(runs)), note=repeats_note(len(base), len(runs)),
                                     metrics=changes))
    return costs


def write_costs(run_dir: Path, costs: list[ProfileCost]) -> Path:
    path = run_dir / COST_FILE
    path.write_text("[\n" + ",\n".join(cost.model_dump_json(indent=1) for cost in costs) + "\n]\n")
    return path

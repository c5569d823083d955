"""A plan's cost table: one family across its rows, the plan's round and the confirmation round apart, and each
verdict marked replicated or not."""

import numpy as np

from kafkabench.core.histogram import Stat
from kafkabench.core.results import ResultDocument, Run, write_result
from kafkabench.report.findings import findings_table
from kafkabench.report.profile_cost import confirm, profile_costs, read_costs, write_costs


def stat(p50):
    return Stat(count=100, mean_ms=p50, p50_ms=p50, p90_ms=p50 * 2, p99_ms=p50 * 3, p999_ms=p50 * 3, max_ms=p50 * 3,
                min_ms=p50 / 2)


def write_round(root, repeats, rng, slow=1.0, round=None, clients=("confluent", "java")):
    """Two profiles, default and `slow`, interleaved; `slow` multiplies the slow profile's confluent latency."""
    for repeat in range(1, repeats + 1):
        for profile in ("default", "slow"):
            runs = [Run(client=client, scenario="ping_pong", params={"size_bytes": 1000},
                        stats={"e2e": stat(10 * rng.normal(1, 0.05) * (slow if profile == "slow" and client == "confluent"
                                                                        else 1))},
                        throughput={"records_per_s": 100.0})
                    for client in clients]
            plan = {"plan": "p", "cell": f"image-{profile}", "scenario": "image", "profile": profile, "repeat": repeat,
                    **({"round": round} if round else {})}
            write_result(ResultDocument(lab="latency", created_at="t", runs=runs, plan=plan),
                         root / f"{repeat:03d}-image-{profile}-r{repeat}")


def test_the_table_is_one_family_and_a_real_cost_is_called(tmp_path):
    write_round(tmp_path, 8, np.random.default_rng(1), slow=2.0)
    table = profile_costs(tmp_path, "default")
    assert table.family == 4  # 2 clients x e2e p50, p99: records/s is not a ping-pong's cost metric
    called = {(cost.client, change.metric): change.verdict for cost, change in table.verdicts()}
    assert called == {("confluent", "stats.e2e.p50_ms"): "regression", ("confluent", "stats.e2e.p99_ms"): "regression"}
    assert all(change.q_value is not None for cost in table.costs for change in cost.metrics)
    assert table.note is None
    assert read_costs(write_costs(tmp_path, table).parent) == table


def test_too_few_repeats_for_the_family_read_cannot_decide(tmp_path):
    write_round(tmp_path, 4, np.random.default_rng(1), slow=2.0)  # 4 a side reach 0.029: not below 0.05 / 4
    table = profile_costs(tmp_path, "default")
    assert {change.verdict for cost in table.costs for change in cost.metrics} == {"cannot decide"}
    assert "5 a side can" in table.note


def test_a_confirmation_round_is_judged_apart_and_marks_each_verdict(tmp_path):
    rng = np.random.default_rng(2)
    write_round(tmp_path, 8, rng, slow=2.0)
    write_round(tmp_path / "confirm", 8, rng, slow=2.0, round="confirm")
    table = profile_costs(tmp_path, "default")
    assert all(cost.samples == (8, 8) for cost in table.costs)  # the confirmation round is not pooled in
    confirm(table, tmp_path)
    assert [change.confirmed for _, change in table.verdicts()] == [True, True]
    assert table.confirmation.family == 2  # only the verdicts' rows, judged on the fresh data alone
    unmarked = [change for cost in table.costs for change in cost.metrics if change.verdict == "within noise"]
    assert unmarked and all(change.confirmed is None for change in unmarked)


def test_a_verdict_the_fresh_data_do_not_repeat_is_not_confirmed(tmp_path):
    rng = np.random.default_rng(3)
    write_round(tmp_path, 8, rng, slow=2.0)
    write_round(tmp_path / "confirm", 8, rng, slow=1.0, round="confirm")  # the change was not there again
    table = confirm(profile_costs(tmp_path, "default"), tmp_path)
    assert [change.confirmed for _, change in table.verdicts()] == [False, False]


def test_the_report_marks_confirmed_findings_apart(tmp_path):
    rng = np.random.default_rng(4)
    write_round(tmp_path, 8, rng, slow=2.0)
    table = profile_costs(tmp_path, "default")
    write_costs(tmp_path, table)
    before = findings_table(tmp_path)
    assert "2 verdict(s), none re-run yet" in before.title and "4 tests: at a raw p < 0.05" in before.title
    assert {row.cells[-1] for row in before.rows} == {f"not confirmed (kafkabench compare {tmp_path} --confirm)"}
    write_round(tmp_path / "confirm", 8, rng, slow=2.0, round="confirm")
    write_costs(tmp_path, confirm(table, tmp_path))
    after = findings_table(tmp_path)
    assert "2 verdict(s), 2 replicated in a confirmation round" in after.title
    assert [row.cells[-1] for row in after.rows] == ["replicated on fresh data"] * 2
    (tmp_path / "cost.json").write_text("[]")  # an older kafkabench's: rows judged alone, not shown as findings
    assert findings_table(tmp_path) is None

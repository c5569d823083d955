import json
import math

import numpy as np
import pytest
import typer
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from kafkabench.cli.compare import compare
from kafkabench.core.histogram import Stat
from kafkabench.core.results import ResultDocument, Run, write_result
from kafkabench.report.compare import compare_metric, compare_paths
from kafkabench.report.significance import (permutation_p, relative_change, repeats_for,
                                            sample_median, smallest_p)

runner = CliRunner()
app = typer.Typer()
app.command()(compare)


def stat(p50, p99):
    return Stat(count=100, mean_ms=p50, p50_ms=p50, p90_ms=p99 * 0.8, p99_ms=p99, p999_ms=p99, max_ms=p99, min_ms=p50 / 2)


def document(cell, repeat, rng, p50=10.0, records_per_s=1000.0, broker=None, errors=0, client="confluent", plan="p"):
    jitter = lambda: rng.normal(1, 0.1)  # noqa: E731 - ~10 % spread, drawn anew for every figure
    rps = records_per_s * jitter()
    run = Run(client=client, scenario="ping_pong",
              params={"size_bytes": 1000, "payload_sha256": f"{rng.integers(1 << 60):x}"},  # random payload per repeat
              stats={"e2e": stat(p50 * jitter(), 3 * p50 * jitter())},
              throughput={"records_per_s": rps, "payload_mb_per_s": rps * 1000 / 1e6},
              counters={"errors": errors, "sent": 100}, duration_s=100 / rps,
              resources={"cpu_s": 2 * jitter(), "broker_cpu_s": broker, "max_rss_mb": 80 * jitter()})
    return ResultDocument(lab="latency", created_at="t", runs=[run],
                          plan={"plan": plan, "cell": cell, "scenario": "latency", "repeat": repeat})


def write_side(root, repeats, seed, cells=("latency-default",), **figures):
    rng = np.random.default_rng(seed)
    for repeat in range(1, repeats + 1):
        for index, cell in enumerate(cells):
            write_result(document(cell, repeat, rng, **figures), root / f"{index:03d}-{cell}-r{repeat}")
    return root


def verdicts(comparison):
    return {m.metric: m.verdict for run in comparison.matched for m in run.metrics}


def test_same_distribution_is_within_noise(tmp_path):
    a = write_side(tmp_path / "a", 8, seed=1)
    b = write_side(tmp_path / "b", 8, seed=2)
    comparison = compare_paths(a, b)
    found = verdicts(comparison)
    assert "regression" not in found.values() and "improvement" not in found.values()
    assert found["stats.e2e.p50_ms"] == "within noise"
    assert comparison.matched[0].a_samples == 8 and comparison.matched[0].note is None
    assert runner.invoke(app, [str(a), str(b), "--fail-on-regression", "1"]).exit_code == 0


def test_injected_regression_is_flagged_and_fails_ci_by_size(tmp_path):
    a = write_side(tmp_path / "a", 8, seed=1)
    b = write_side(tmp_path / "b", 8, seed=2, p50=15.0, records_per_s=600.0)
    found = verdicts(compare_paths(a, b))
    assert found["stats.e2e.p50_ms"] == "regression"
    assert found["throughput.records_per_s"] == "regression"
    assert found["resources.cpu_s"] == "within noise"
    failed = runner.invoke(app, [str(a), str(b), "--fail-on-regression", "20"])
    assert failed.exit_code == 1
    assert "stats.e2e.p50_ms" in failed.stderr and "throughput.records_per_s" in failed.stderr
    assert runner.invoke(app, [str(a), str(b), "--fail-on-regression", "80"]).exit_code == 0


def test_improvement_is_not_a_regression(tmp_path):
    a = write_side(tmp_path / "a", 8, seed=1, p50=15.0, records_per_s=600.0)
    b = write_side(tmp_path / "b", 8, seed=2)
    found = verdicts(compare_paths(a, b))
    assert found["stats.e2e.p50_ms"] == "improvement" and found["throughput.records_per_s"] == "improvement"
    assert runner.invoke(app, [str(a), str(b), "--fail-on-regression", "0"]).exit_code == 0


def test_one_sample_each_is_noise_unknown_and_says_what_is_needed(tmp_path):
    a = write_side(tmp_path / "a", 1, seed=1)
    b = write_side(tmp_path / "b", 1, seed=2, p50=30.0)
    comparison = compare_paths(a, b)
    p50 = comparison.matched[0].metrics[0]
    assert p50.metric == "stats.e2e.p50_ms" and p50.verdict == "noise unknown" and p50.change_pct > 100
    assert p50.p_value is None and p50.ci_low_pct is None
    result = runner.invoke(app, [str(a), str(b), "--fail-on-regression", "1"])
    assert result.exit_code == 0
    assert "noise unknown" in result.stdout and "run at least" in result.stdout


def test_three_against_three_cannot_call_even_a_big_change(tmp_path):
    a = write_side(tmp_path / "a", 3, seed=1)
    b = write_side(tmp_path / "b", 3, seed=2, p50=30.0, records_per_s=300.0)
    comparison = compare_paths(a, b)
    assert set(verdicts(comparison).values()) <= {"cannot decide", "within noise", "unavailable"}
    assert verdicts(comparison)["stats.e2e.p50_ms"] == "cannot decide"
    assert "every verdict here reads cannot decide" in comparison.matched[0].note
    result = runner.invoke(app, [str(a), str(b), "--fail-on-regression", "1"])
    assert result.exit_code == 0
    assert "cannot decide" in result.stdout and "0 regression(s)" in result.stdout


def test_none_is_unavailable_never_zero(tmp_path):
    a = write_side(tmp_path / "a", 4, seed=1)
    b = write_side(tmp_path / "b", 4, seed=2, broker=3.0)
    broker = next(m for m in compare_paths(a, b).matched[0].metrics if m.metric == "resources.broker_cpu_s")
    assert broker.verdict == "unavailable" and broker.a_median is None and broker.b_median == pytest.approx(3.0)
    assert broker.change_pct is None and "unavailable in A" in broker.reason
    assert "unavailable" in runner.invoke(app, [str(a), str(b)]).stdout


def test_some_samples_without_a_value_leave_the_rest():
    change = compare_metric("resources.broker_cpu_s", "lower", [1.0, None, 1.1, 1.2], [None, None, 1.0, 1.1])
    assert (change.a_n, change.b_n) == (3, 2) and change.a_median == pytest.approx(1.1)  # the middle of 1.0, 1.1, 1.2


def test_unmatched_runs_are_listed(tmp_path):
    a = write_side(tmp_path / "a", 2, seed=1, cells=("latency-default", "latency-durable"))
    b = write_side(tmp_path / "b", 2, seed=2, cells=("latency-default", "latency-fast"))
    comparison = compare_paths(a, b)
    assert [run.group for run in comparison.matched] == ["latency-default"]
    assert comparison.only_a == ["latency-durable confluent ping_pong (2 in A)"]
    assert comparison.only_b == ["latency-fast confluent ping_pong (2 in B)"]
    output = runner.invoke(app, [str(a), str(b)]).stdout
    assert "only in A: latency-durable" in output and "only in B: latency-fast" in output


def test_clear_errors(tmp_path):
    a = write_side(tmp_path / "a", 1, seed=1, cells=("x",))
    b = write_side(tmp_path / "b", 1, seed=2, cells=("y",))
    (tmp_path / "empty").mkdir()
    empty = runner.invoke(app, [str(a), str(tmp_path / "empty")])
    assert empty.exit_code == 1 and "no result.json under it" in empty.stderr
    disjoint = runner.invoke(app, [str(a), str(b)])
    assert disjoint.exit_code == 1 and "no run in" in disjoint.stderr


def test_bad_input_is_one_line_each(tmp_path):
    a = write_side(tmp_path / "a", 6, seed=1)
    other = write_side(tmp_path / "other", 6, seed=2, plan="another-plan")
    plans = runner.invoke(app, [str(a), str(other)])
    assert plans.exit_code == 1 and "ran plan p and" in plans.stderr and "another-plan" in plans.stderr
    mixed = write_side(tmp_path / "mixed", 6, seed=3)
    write_side(tmp_path / "mixed" / "more", 6, seed=4, plan="another-plan")
    assert "results of 2 plans (another-plan, p) mixed" in runner.invoke(app, [str(mixed), str(a)]).stderr
    for fdr in ("0", "0.6", "-1"):
        refused = runner.invoke(app, [str(a), str(a), "--fdr", fdr])
        assert refused.exit_code == 1 and "a false discovery rate is above 0 and at most 0.5" in refused.stderr
    two = runner.invoke(app, [str(a), str(a), "--confirm"])
    assert two.exit_code == 1 and "--confirm takes one plan's run directory" in two.stderr
    no_plan = runner.invoke(app, [str(a), "--confirm"])
    assert no_plan.exit_code != 0 and "not a plan's run directory" in str(no_plan.exception or no_plan.stderr)
    (a / "plan.yaml").write_text("name: once\nprofiles: [default, durable]\nbaseline_profile: default\n"
                                 "scenarios:\n  - {lab: produce, size: 100, count: 1000}\n")
    (a / "run.json").write_text('{"source": "gone.yaml"}')
    once = runner.invoke(app, [str(a), "--confirm"])
    assert once.exit_code == 1 and "plan once runs 1 repeat, so its table has no verdicts to confirm" in once.stderr


def test_a_family_of_many_metrics_is_judged_together_and_its_caption_says_what_chance_does(tmp_path):
    a = write_side(tmp_path / "a", 8, seed=1, cells=("c1", "c2", "c3"))
    b = write_side(tmp_path / "b", 8, seed=2, cells=("c1", "c2", "c3"))
    comparison = compare_paths(a, b, fdr=0.1)
    tested = [m for run in comparison.matched for m in run.metrics if m.p_value is not None]
    assert comparison.family == len(tested) > 20 and comparison.fdr == 0.1
    assert all(m.q_value is not None and m.q_value >= m.p_value for m in tested)
    output = runner.invoke(app, [str(a), str(b)]).stdout
    assert f"{comparison.family} tests: at a raw p < 0.05, chance alone would mark" in " ".join(output.split())


def test_json_is_the_comparison_and_reproducible(tmp_path):
    a = write_side(tmp_path / "a", 8, seed=1)
    b = write_side(tmp_path / "b", 8, seed=2, p50=15.0)
    first = runner.invoke(app, [str(a), str(b), "--json"])
    again = runner.invoke(app, [str(a), str(b), "--json"])
    assert first.stdout == again.stdout
    data = json.loads(first.stdout)
    p50 = data["matched"][0]["metrics"][0]
    assert p50["verdict"] == "regression" and p50["q_value"] < 0.05
    assert p50["p_value"] <= p50["q_value"] and data["fdr"] == 0.05 and data["family"] >= 4
    assert data["min_effect_pct"] == 5.0


def test_min_effect_keeps_small_real_changes_within_noise():
    a = [10.0, 10.01, 10.02, 10.03, 10.04, 10.05]
    b = [v * 1.03 for v in a]
    assert compare_metric("m", "lower", a, b).verdict == "within noise"
    assert compare_metric("m", "lower", a, b, min_effect_pct=1).verdict == "regression"


def test_zero_baseline_and_zero_spread():
    errors = compare_metric("counters.errors", "lower", [0] * 8, [2, 3, 4, 5, 6, 7, 8, 9])
    assert errors.verdict == "regression" and math.isinf(errors.change_pct) and math.isinf(errors.worse_by_pct)
    same = compare_metric("m", "lower", [5.0] * 6, [5.0] * 6)
    assert same.verdict == "within noise" and same.change_pct == 0 and same.reason == "the same in every repeat"
    assert same.p_value is None  # no test: left out of the family it would only dilute
    assert list(relative_change(np.array([0.0, 0.0, 2.0]), np.array([0.0, 1.0, 1.0]))) == [0.0, math.inf, -0.5]


def test_exact_permutation_p_and_power():
    a, b = np.array([1.0, 2.0, 3.0, 4.0]), np.array([5.0, 6.0, 7.0, 8.0])
    # only the observed split and its mirror are as extreme: every Harrell-Davis weight is positive
    assert permutation_p(a, b) == 2 / 70
    assert permutation_p(a, b, statistic=sample_median) == 4 / 70  # 4 and 5 swapped leave both medians alone
    assert permutation_p(a, a[::-1].copy()) == 1.0
    assert smallest_p(3, 3) == 0.1 and smallest_p(4, 4) == 2 / 70 and smallest_p(5, 5) < 0.05
    assert repeats_for(1) == 4


def test_repeats_tied_at_whole_milliseconds_still_separate():
    fast, slow = np.array([3.0, 3.0, 3.0, 3.0, 3.0]), np.array([4.0, 4.0, 4.0, 4.0, 4.0])
    assert permutation_p(fast, slow) == 2 / 252  # the floor, as for untied values
    assert permutation_p(fast, slow, statistic=sample_median) == 1.0  # every split has medians 1 apart
    one_off = np.array([3.0, 3.0, 3.0, 3.0, 4.0])  # one repeat of A read 4: 21 labellings of 252 as far apart
    assert permutation_p(one_off, slow) == pytest.approx(12 / 252)
    assert permutation_p(one_off, slow, statistic=sample_median) == pytest.approx(132 / 252)


def test_duration_of_a_time_bounded_run_is_not_compared():
    from kafkabench.report.compare import metric_values
    assert "duration_s" not in metric_values(Run(client="c", scenario="produce", params={"duration_s": 30}))
    assert "duration_s" in metric_values(Run(client="c", scenario="produce", params={"duration_s": None}))


samples = st.lists(st.floats(min_value=0, max_value=1e9, allow_nan=False), min_size=1, max_size=12)


@settings(max_examples=60, deadline=None)
@given(samples, st.sampled_from(["lower", "higher"]), st.randoms(use_true_random=False))
def test_equal_samples_are_never_a_regression(values, better, random):
    shuffled = list(values)
    random.shuffle(shuffled)
    change = compare_metric("m", better, values, shuffled, min_effect_pct=0)
    assert change.verdict != "regression" and change.verdict != "improvement"

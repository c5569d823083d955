"""The pareto goal's front on synthetic trial figures: which trials are on it, which are re-measured, where the
default runs."""

import pytest

from kafkabench.labs.tune.front import Point, default_rates, non_dominated, spread


def point(number, p99, rate):
    return Point(number, p99, rate, rate)


def test_the_front_keeps_only_what_nothing_beats_on_both():
    points = [point(1, 5.0, 1_000), point(2, 4.0, 1_000),  # 2 beats 1: as fast, lower p99
              point(3, 9.0, 5_000), point(4, 9.0, 4_000),  # 3 beats 4: as low, faster
              point(5, 30.0, 20_000), point(6, 50.0, 19_000), point(7, 3.0, 500)]
    assert [p.number for p in non_dominated(points)] == [7, 2, 3, 5]


def test_equal_points_are_both_on_the_front():
    assert [p.number for p in non_dominated([point(1, 5.0, 100), point(2, 5.0, 100)])] == [1, 2]


@pytest.mark.parametrize("count, picked", [(1, [9]), (2, [0, 9]), (3, [0, 4, 9]), (4, [0, 3, 6, 9]), (12, list(range(10)))])
def test_the_re_measured_points_spread_along_the_front_and_always_include_the_fastest(count, picked):
    front = [point(i, 1.0 + i, 100.0 * (i + 1)) for i in range(10)]
    assert [p.number for p in spread(front, count)] == picked


def test_the_default_runs_across_the_range():
    assert default_rates(16_000, 3) == [1_000, 4_000, 12_800]
    assert default_rates(16_000, 4) == [1_000, 4_000, 12_800, 1_000]
    assert default_rates(8, 1) == [1]


def test_a_pareto_tunes_tables_show_each_trials_rate_and_each_front_point_against_the_default():
    from kafkabench.core.results import ResultDocument
    from kafkabench.labs.tune import TuneLab

    change = {"metric": "e2e p99", "better": "lower", "change_pct": -42.0, "ci_low_pct": -50.0, "ci_high_pct": -30.0,
              "p_value": 0.01, "verdict": "improvement", "reason": ""}
    trial = {"number": 3, "kind": "search", "state": "complete", "objective": [6.0, 5.0, 7.5], "achieved": 19_950.0,
             "offered": 20_000.0, "feasible": True, "reasons": [], "percentiles_ms": {"p99": [6.0, 5.0, 7.5]},
             "settings": {"producer": {"linger.ms": "1"}, "consumer": {}, "topic": {}}}
    document = ResultDocument(lab="tune", created_at="now", params={
        "goal": "pareto", "client": "confluent", "size": 1024, "sampler": "TPESampler", "rates": [400, 40_000],
        "slo": ["p99=200ms"], "baseline": {"producer": {"linger.ms": "5"}}, "trials": [trial],
        "front": [{"label": "trial 3", "rate": 20_000.0, "settings": trial["settings"], "values": [6.0, 6.2],
                   "feasible": [True, True], "default_values": [10.0, 11.0], "default_feasible": [True, True],
                   "change": change, "recommended": True, "reason": ""}],
        "recommendation": {"label": "trial 3", "settings": {}, "reason": "1 of 1 front points beat the default"}})
    trials, front = TuneLab().tables(document)
    assert "400-40,000 records/s" in trials.title
    assert [c.name for c in trials.columns][:4] == ["trial", "kind", "achieved/s", "e2e p99 ms (95 %)"]
    assert trials.rows[0].cells[2:4] == ["19,950", "6.00 (5.00-7.50)"] and trials.rows[0].cells[-1] == "linger.ms=1"
    assert front.rows[0].cells[:7] == ["trial 3", "20,000", "2", "6.10 (6.00-6.20)", "10.50 (10.00-11.00)", "-42.0 %",
                                       "-50.0 to -30.0 %"]
    assert front.rows[0].kind == "reference"

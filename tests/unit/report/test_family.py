"""The family rule: Benjamini-Hochberg q-values, the test's floor, the repeats a family needs, and a table of
verdicts judged together."""

import numpy as np
import pytest

from kafkabench.report.compare import compare_metric
from kafkabench.report.family import FdrError, chance_text, check_fdr, judge_family, repeats_note
from kafkabench.report.significance import benjamini_hochberg, can_decide, repeats_for, sample_median, smallest_p


def test_benjamini_hochberg_on_a_textbook_set():
    # m = 5: p_(k) m / k = .005, .0125, .03333, .0375, .05; the step-up keeps each the minimum of those after it
    q = benjamini_hochberg([0.01, 0.001, 0.04, 0.03, 0.05])
    assert q == pytest.approx([0.025, 0.005, 0.05, 0.05, 0.05])


def test_ties_share_their_q_and_order_is_kept():
    q = benjamini_hochberg([0.02, 0.02, 0.02, 0.5])
    assert q == pytest.approx([0.02 * 4 / 3] * 3 + [0.5])


def test_all_null_p_values_are_never_discoveries():
    rng = np.random.default_rng(7)
    for _ in range(200):
        p = rng.uniform(size=24)
        q = benjamini_hochberg(p)
        assert all(a <= b + 1e-12 for a, b in zip(p, q))  # q never below p
        assert max(q) <= 1.0
    assert benjamini_hochberg([1.0] * 10) == [1.0] * 10
    assert benjamini_hochberg([]) == []


def test_all_strong_p_values_stay_discoveries():
    q = benjamini_hochberg([0.001] * 20)
    assert q == pytest.approx([0.001] * 20)  # every one at the smallest rank's share: m p / m
    assert max(benjamini_hochberg([0.001 * (k + 1) for k in range(20)])) == pytest.approx(0.02)


def test_the_smallest_p_of_the_median_test_for_given_repeats():
    assert smallest_p(3, 3) == 0.1 and smallest_p(4, 4) == 2 / 70
    assert smallest_p(5, 5) == pytest.approx(2 / 252)  # the observed split and its mirror: 0.0079
    assert smallest_p(5, 5, sample_median) == pytest.approx(12 / 252)  # the 0.048 floor 5-vs-5 verdicts once sat on
    assert smallest_p(6, 6) == pytest.approx(2 / 924) and smallest_p(4, 6) == pytest.approx(2 / 210)
    assert smallest_p(6, 6) < smallest_p(5, 5) < smallest_p(4, 4)


def test_the_repeats_a_family_needs():
    assert repeats_for(1) == 4  # one test: 4 a side reach p < 0.05 (2 / 70)
    assert repeats_for(3) == 5  # tune's 3 finalists: 0.0079 x 3 < 0.05
    assert repeats_for(27) == 7  # broker-variables' cost table
    assert repeats_for(6) == 5 and repeats_for(7) == 6 and repeats_for(23) == 6 and repeats_for(24) == 7
    assert repeats_for(27, fdr=0.1) == 6
    assert not can_decide(5, 5, 7) and can_decide(5, 5, 6) and not can_decide(1, 9, 1)
    assert repeats_for(10 ** 6) is None  # past what a plan can run: a smaller table is the answer


def test_a_table_of_null_rows_calls_nothing_where_single_tests_would():
    rng = np.random.default_rng(3)
    rows = [compare_metric(f"m{i}", "lower", list(rng.normal(10, 1, 5)), list(rng.normal(10, 1, 5)))
            for i in range(40)]
    family = judge_family(rows, 0.05, 5.0)
    assert family == 40
    assert {row.verdict for row in rows} == {"cannot decide"}  # 5 vs 5 among 40: q >= 40 x 0.0079
    assert all(row.q_value >= row.p_value for row in rows)


def test_a_strong_change_survives_the_family_and_a_floor_one_does_not():
    base = [10.0 + 0.03 * k for k in range(11)]
    strong = compare_metric("p99", "lower", base, [v * 1.5 for v in base])
    nulls = [compare_metric(f"m{i}", "lower", base, list(np.roll(base, i))) for i in range(1, 20)]
    judge_family([strong, *nulls], 0.05, 5.0)
    assert strong.verdict == "regression" and strong.q_value < 0.05
    assert all(n.verdict == "within noise" for n in nulls)


def test_rows_without_a_test_stay_out_of_the_family():
    same = compare_metric("errors", "lower", [0.0] * 6, [0.0] * 6)
    one = compare_metric("x", "lower", [1.0], [2.0])
    real = compare_metric("p50", "lower", [10.0, 10.1, 10.2, 9.9, 10.05], [15.0, 15.1, 15.2, 14.9, 15.05])
    assert judge_family([same, one, real], 0.05, 5.0) == 1
    assert real.verdict == "regression" and same.q_value is None and one.verdict == "noise unknown"


def test_the_caption_says_what_chance_would_mark():
    assert chance_text(24, 0.05) == ("24 tests: at a raw p < 0.05, chance alone would mark 1.2 of them; a verdict "
                                     "needs q < 0.05 (Benjamini-Hochberg across the table)")
    assert "7 a side can" in repeats_note(5, 5, 27, 0.05)
    assert repeats_note(7, 7, 27, 0.05) is None


@pytest.mark.parametrize("fdr", [0, -0.1, 0.51, 1])
def test_an_fdr_outside_its_range_is_refused_in_one_line(fdr):
    with pytest.raises(FdrError, match=r"--fdr .*above 0 and at most 0.5"):
        check_fdr(fdr)
    assert check_fdr(0.5) == 0.5 and check_fdr(0.01) == 0.01

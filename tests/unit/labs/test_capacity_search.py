"""The capacity lab's search, its holds and judgement on simulated systems: latency that explodes past a known knee,
with noise, judged by the same code as a real step (window-bootstrap intervals, the SLO at the upper end)."""

import math

import numpy as np
import pytest

from kafkabench.core.histogram import LatencyHistogram
from kafkabench.labs.capacity.figures import percentile_interval
from kafkabench.labs.capacity.search import Holds, RateSearch, median_found
from kafkabench.labs.capacity.slo import Slo
from kafkabench.labs.capacity.step import Step, judge

SLO = Slo(99, 50.0)
KNEE = 40_000  # records/s past which latency climbs steeply


def true_p99_ms(rate: float, knee: float = KNEE) -> float:
    return 30.0 if rate <= knee else 30.0 * (1 + 20 * (rate / knee - 1))


def threshold(knee: float = KNEE) -> float:
    """Where the true p99 reaches the SLO's 50 ms."""
    return knee * (1 + (50 / 30 - 1) / 20)


THRESHOLD = threshold()


def simulated_step(rate: float, rng: np.random.Generator, windows: int = 10, per_window: int = 2000,
                   knee: float = KNEE) -> Step:
    """A step of the simulated system: each window's latencies lognormal with the rate's p99, scaled by noise."""
    sigma = 0.5
    median_us = true_p99_ms(rate, knee) * 1000 / math.exp(2.326 * sigma)
    histograms = []
    for _ in range(windows):
        histogram = LatencyHistogram()
        scale = rng.lognormal(0, 0.08)
        histogram.record_many_us((rng.lognormal(math.log(median_us * scale), sigma, per_window)).astype(np.int64))
        histograms.append(histogram)
    step = Step("search", rate, achieved=rate)
    step.percentiles = {"p99": percentile_interval(histograms, 99, resamples=400)}
    return judge(step, [SLO], "e2e")


def search_on(start: float, seed: int, ceiling: float = math.inf, system=simulated_step) -> RateSearch:
    rng = np.random.default_rng(seed)
    search = RateSearch(start, precision=0.05, max_steps=14, ceiling=ceiling)
    while (rate := search.next_rate()) is not None:
        step = system(rate, rng)
        search.record(rate, step.passed, step.clearly)
    return search


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("start", [1_000, 10_000, 150_000])
def test_it_finds_the_knee_within_the_precision_in_at_most_14_steps(start, seed):
    search = search_on(start, seed)
    assert len(search.steps) <= 14 and search.stop_reason.startswith("bracketed within 5%")
    # within the precision of the threshold, below it: a step passes by the upper end of its interval
    assert 0.95 * THRESHOLD <= search.passed <= THRESHOLD
    assert search.failed / search.passed <= 1.05


def test_a_step_that_fails_is_never_passed_by_noise_twice_in_a_row():
    rng = np.random.default_rng(7)
    for rate in (THRESHOLD * 1.03, THRESHOLD * 1.06, THRESHOLD * 1.1):
        verdicts = [simulated_step(rate, rng).passed for _ in range(25)]
        assert not any(a and b for a, b in zip(verdicts, verdicts[1:])), (rate, verdicts)


@pytest.mark.parametrize("paused", [(2,), (3, 6), (4, 7)])
def test_a_lone_failure_by_a_pause_is_run_again_and_does_not_move_the_bracket(paused):
    """Steps numbered in `paused` fail whatever their rate (a collection, a disk flush): each is run again, and the
    search ends where it ends without pauses."""
    numbers = iter(range(100))

    def pausing(rate, rng):
        step = simulated_step(rate, rng)
        return Step("search", rate, passed=False) if next(numbers) in paused else step

    calm, paused_search = search_on(10_000, seed=2), search_on(10_000, seed=2, system=pausing)
    assert paused_search.passed == pytest.approx(calm.passed, rel=0.05)
    assert 0.95 * THRESHOLD <= paused_search.passed <= THRESHOLD and len(paused_search.steps) <= 14
    again = [i for i, ((rate, ok), (after, _)) in enumerate(zip(paused_search.steps, paused_search.steps[1:]))
             if not ok and after == rate]
    assert set(paused) <= set(again)


def test_a_failure_run_again_that_fails_again_is_believed():
    search = RateSearch(1_000, precision=0.05)
    for rate, passed in [(1_000, True), (2_000, False), (2_000, False)]:
        assert search.next_rate() == rate
        search.record(rate, passed)
    assert (search.passed, search.failed) == (1_000, 2_000) and search.next_rate() == pytest.approx(1_414.2, abs=0.1)
    unconfirmed = RateSearch(1_000, confirm=False)
    unconfirmed.record(1_000, True)
    unconfirmed.record(2_000, False)
    assert unconfirmed.failed == 2_000 and unconfirmed.next_rate() == pytest.approx(1_414.2, abs=0.1)


def test_a_system_that_fails_at_the_first_rate_is_searched_downwards():
    search = search_on(THRESHOLD * 8, seed=1)
    rates = [rate for rate, _ in search.steps]
    assert rates[:4] == pytest.approx([THRESHOLD * 8, THRESHOLD * 4, THRESHOLD * 2, THRESHOLD])
    assert 0.95 * THRESHOLD <= search.passed <= THRESHOLD


def test_a_system_that_never_fails_stops_at_the_stated_ceiling():
    search = search_on(1_000, seed=1, ceiling=20_000)
    assert [rate for rate, _ in search.steps] == [1_000, 2_000, 4_000, 8_000, 16_000, 20_000]
    assert search.passed == 20_000 and search.failed is None
    assert search.stop_reason == "passed at the ceiling, 20,000 records/s: the cluster may take more"


def test_a_system_that_always_fails_stops_at_the_floor_or_the_step_limit():
    never = lambda rate, rng: Step("search", rate, passed=False, clearly=True)  # noqa: E731
    search = search_on(1_000, seed=1, system=never)
    assert search.passed is None and search.stop_reason == "failed at the floor, 1 records/s"
    assert len(search.steps) == 11  # 1000, 500, ... 1.95, then the floor itself
    limited = RateSearch(1e9, max_steps=5)
    while (rate := limited.next_rate()) is not None:
        limited.record(rate, False)  # not clearly: each rate runs twice
    assert [rate for rate, _ in limited.steps] == [1e9, 1e9, 5e8, 5e8, 2.5e8]
    assert len(limited.steps) == 5 and limited.stop_reason == "5 steps (--max-steps) taken"


def test_a_start_outside_the_bounds_is_refused():
    with pytest.raises(ValueError, match="outside"):
        RateSearch(100, ceiling=50)


def hold_on(candidate: float, clean: list[float], seed: int, knee: float = KNEE, max_holds: int = 14) -> Holds:
    """The holds of a simulated system whose knee may have moved since the search: a hold is a step six times as
    long."""
    rng = np.random.default_rng(seed)
    holds = Holds(candidate, clean, precision=0.05, max_holds=max_holds)
    while (rate := holds.next_rate()) is not None:
        holds.record(rate, simulated_step(rate, rng, windows=60, knee=knee).passed)
    return holds


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("drift", [0.9, 0.75, 0.5])
def test_a_knee_that_drifts_down_between_the_search_and_the_hold_ends_held_below_it(seed, drift):
    search = search_on(10_000, seed)
    assert search.passed >= 0.95 * THRESHOLD
    holds = hold_on(search.passed, search.clean, seed, knee=drift * KNEE)
    assert holds.held is not None and holds.stop_reason == "", holds
    # below where the drifted system breaks, and not further below it than the bisection's precision or, with no
    # clean pass near, one halving
    assert threshold(drift * KNEE) / 2 <= holds.held <= threshold(drift * KNEE)
    assert holds.failed and all(rate > holds.held for rate in holds.failed) and len(holds.failed) <= 6


@pytest.mark.parametrize("seed", range(3))
def test_a_step_that_fails_then_passes_is_unsure_and_a_hold_settles_it_below_the_knee(seed):
    """Above the knee, every rate's first step fails and its confirm passes (a pause at the wrong moment, twice): the
    search climbs on unsure rates; its answer is unsure, and the holds end below the knee."""
    seen = set()

    def lucky_confirms(rate, rng):
        step = simulated_step(rate, rng)
        if step.passed or rate in seen:
            return Step("search", rate, passed=True) if rate in seen else step
        seen.add(rate)
        return Step("search", rate, passed=False)

    search = search_on(10_000, seed, ceiling=8 * KNEE, system=lucky_confirms)
    assert search.passed > THRESHOLD and search.found_unsure and search.passed in search.unsure
    assert all(rate <= THRESHOLD for rate in search.clean)
    holds = hold_on(search.passed, search.clean, seed)
    assert holds.held is not None and 0.95 * THRESHOLD / 2 <= holds.held <= THRESHOLD


def test_the_holds_bisect_between_the_highest_clean_pass_and_the_failed_hold():
    """The run the issue reported: 135,180 passed cleanly, 160,757 only its confirm; every hold above 135,180
    fails. It ends held at 135,180, not with none."""
    holds = Holds(160_757, [67_590, 135_180], precision=0.05)
    for passed in (False, False, False, True):
        holds.record(holds.next_rate(), passed)
    assert holds.failed == pytest.approx([160_757, 147_414, 141_165], abs=1)
    assert holds.held == 135_180 and holds.next_rate() is None and holds.stop_reason == ""


def test_holds_without_a_clean_pass_below_halve_and_stop_at_their_bound_or_the_floor():
    halving = Holds(1_000, [], max_holds=4)
    while (rate := halving.next_rate()) is not None:
        halving.record(rate, False)
    assert halving.failed == [1_000, 500, 250, 125] and halving.held is None
    assert halving.stop_reason == "4 holds (--max-steps) failed, the last at 125 records/s"
    floor = Holds(3, [], floor=1)
    while (rate := floor.next_rate()) is not None:
        floor.record(rate, False)
    assert floor.failed == [3, 1.5, 1] and floor.stop_reason == "the hold failed at the floor, 1 records/s"


def test_a_first_hold_that_passes_is_the_answer():
    holds = Holds(5_000, [1_000, 2_000])
    holds.record(holds.next_rate(), True)
    assert (holds.held, holds.failed, holds.next_rate()) == (5_000, [], None)


def test_a_rate_is_held_once_it_passed_its_holds_in_a_row_and_one_failure_sends_the_holds_lower():
    holds = Holds(5_000, [1_000, 2_000], repeats=3)
    for passed in (True, True, False):  # 5,000 passed twice, then failed: believed
        holds.record(holds.next_rate(), passed)
    assert holds.failed == [5_000] and holds.held is None and holds.passes == []
    rates = []
    while (rate := holds.next_rate()) is not None:
        rates.append(rate)
        holds.record(rate, True)
    assert rates == [pytest.approx(3_162, abs=1)] * 3 and holds.held == rates[0]


def test_a_pass_at_the_first_run_is_clean_and_after_a_failure_unsure():
    search = RateSearch(1_000, precision=0.05)
    for rate, passed in [(1_000, True), (2_000, False), (2_000, True)]:
        search.record(rate, passed)
    assert search.clean == [1_000] and search.unsure == [2_000] and search.passed == 2_000 and search.found_unsure


def test_the_searches_answer_is_a_rate_a_search_found():
    assert median_found([]) is None and median_found([5.0]) == 5.0
    assert median_found([3.0, 1.0, 2.0]) == 2.0 and median_found([4.0, 1.0, 3.0, 2.0]) == 2.0

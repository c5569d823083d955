"""max-rate's whole way through (probe, searches, holds, answer) on simulated systems: run_step replaced by a system
with a knee, so the result document's searches, holds and answer are checked without a broker."""

import pytest

from kafkabench.core.events import SILENT
from kafkabench.core.results import ResultDocument
from kafkabench.labs.capacity import run as run_module
from kafkabench.labs.capacity import step as step_module
from kafkabench.labs.capacity.report import disagreement, headline
from kafkabench.labs.capacity.scenario import MaxRateScenario
from kafkabench.labs.capacity.step import Step

FAIL = ["e2e p99 80 ms (95 % up to 90) > 50 ms"]


def simulate(monkeypatch, knees: dict[str, float], unpaced: float = 40_000, lucky: float | None = None):
    """Steps pass at or below the knee of their kind (search, confirm, hold) and fail clearly above it; `lucky`: a
    rate whose search step fails, not clearly, and whose confirm passes. Returns the (kind, rate) of every step."""
    ran = []

    def run_step(kind, produce, phase, slos, metric, target, out_dir, listener):
        ran.append((kind, produce.rate))
        if kind == "probe":
            return Step(kind, -1, achieved=unpaced, mb_per_s=1.0)
        if produce.rate == lucky:
            passed = kind == "confirm"
            return Step(kind, produce.rate, achieved=produce.rate, mb_per_s=1.0, passed=passed,
                        reasons=[] if passed else FAIL)
        passed = produce.rate <= knees.get(kind, knees["search"])
        return Step(kind, produce.rate, achieved=produce.rate, mb_per_s=1.0, passed=passed, clearly=not passed,
                    reasons=[] if passed else FAIL)

    monkeypatch.setattr(run_module, "run_step", run_step)
    monkeypatch.setattr(step_module, "run_step", run_step)  # the probe's (run_probe)
    return ran


def max_rate(tmp_path, **options) -> ResultDocument:
    scenario = MaxRateScenario(**{"size": 1000, "slo": ["p99=50ms"], "settle": 1, "measure": 2, "hold": 10, **options})
    document = ResultDocument(lab="max-rate", created_at="2026-11-27T00:00:00+00:00",
                              params=scenario.model_dump(mode="json", exclude_none=True))
    session = run_module._Session(scenario, None, tmp_path, document, SILENT)
    session.search()
    return document


def test_a_capacity_that_drops_before_the_hold_still_ends_held_below_it(monkeypatch, tmp_path):
    ran = simulate(monkeypatch, {"search": 20_000, "hold": 13_000})
    document = max_rate(tmp_path)
    found = document.params["sustainable"]
    # between the highest clean pass (10,000) and the new knee: the first hold that passes is the answer
    assert found["held"] and 10_000 <= found["records_per_s"] <= 13_000 and found["holds_failed"]
    assert all(rate > found["records_per_s"] for rate in found["holds_failed"])
    assert [kind for kind, _ in ran].count("probe") == 1 and ran[-3:] == [("hold", found["records_per_s"])] * 3
    assert found["holds"] == 3 and document.params["hold_results"]["passed"] == 3
    searches = document.params["search_results"]
    assert len(searches) == 2 and all(19_000 <= s["found"] <= 20_000 for s in searches)
    assert found["searches"]["count"] == 2 and found["searches"]["spread"] == 0
    assert headline(document) == (
        "sustainable: 11,892 records/s (1.0 MB/s), held 3 times (after the holds at 20,000, 14,142 failed); 2 searches "
        "found 20,000 .. 20,000 (median 20,000); next step 14,142 failed: e2e p99 80 ms (95 % up to 90) > 50 ms")
    assert disagreement(document) is None


def test_the_answer_is_a_rate_that_passed_every_one_of_its_holds_in_a_row(monkeypatch, tmp_path):
    # the search finds 20,000; its second hold fails (the cluster's capacity moved a minute later), so 20,000 is
    # not the answer: the holds go down, and the rate below must pass its three holds afresh
    ran = simulate(monkeypatch, {"search": 20_000, "hold": 20_000})
    outcomes = iter([True, False])
    simulated = run_module.run_step

    def second_hold_fails(kind, produce, *rest):
        step = simulated(kind, produce, *rest)
        if kind == "hold" and produce.rate == 20_000:
            step.passed = next(outcomes)
        return step

    monkeypatch.setattr(run_module, "run_step", second_hold_fails)
    document = max_rate(tmp_path, searches=1)
    found, holds = document.params["sustainable"], document.params["hold_results"]
    held = [rate for kind, rate in ran if kind == "hold"]
    assert held[:2] == [20_000, 20_000] and held[2:] == [found["records_per_s"]] * 3
    assert found["records_per_s"] < 20_000 and found["held"] and found["holds"] == 3
    assert holds["failed"] == [20_000] and (holds["passed"], holds["repeats"]) == (3, 3)
    assert "held 3 times (after the holds at 20,000 failed)" in headline(document)


def test_a_rate_that_passed_only_its_confirm_is_unsure_until_a_hold_settles_it(monkeypatch, tmp_path):
    simulate(monkeypatch, {"search": 20_000}, lucky=20_000)  # 10,000 then 20,000 (failed, confirmed), 40,000 failed
    document = max_rate(tmp_path, searches=1, hold=0)
    found = document.params["sustainable"]
    assert found["records_per_s"] == 20_000 and found["unsure"] and not found["held"]
    assert "unsure (a step at it failed, its confirm passed)" in headline(document)
    held = max_rate(tmp_path, searches=1)
    assert held.params["sustainable"]["held"] and not held.params["sustainable"]["unsure"]


def test_searches_that_disagree_say_so_and_the_answer_is_their_median(monkeypatch, tmp_path):
    knees = {"search": 10_000, "hold": 1e9}
    simulate(monkeypatch, knees)
    search = run_module._Session._search

    def moving_knee(self, number, start, ceiling):  # the cluster's capacity moves between the searches
        knees["search"] = [10_000, 30_000, 20_000][number - 1]
        return search(self, number, start, ceiling)

    monkeypatch.setattr(run_module._Session, "_search", moving_knee)
    document = max_rate(tmp_path, searches=3)
    found = [s["found"] for s in document.params["search_results"]]
    assert found[0] <= 10_000 < found[2] <= 20_000 < found[1] <= 30_000
    assert document.params["sustainable"]["records_per_s"] == found[2]  # the median, held
    assert disagreement(document).startswith(f"searches disagree by {found[1] / found[0] - 1:.0%}: this cluster's")


def test_no_rate_sustained_when_the_lowest_rate_fails(monkeypatch, tmp_path):
    simulate(monkeypatch, {"search": 0.5})
    document = max_rate(tmp_path, searches=1, start_rate=8, ceiling=100)
    assert document.params["sustainable"] is None
    assert headline(document) == "no rate sustained: failed at the floor, 1 records/s"


@pytest.mark.parametrize("searches", [1, 2])
def test_every_step_is_a_run_with_its_search_number(monkeypatch, tmp_path, searches):
    simulate(monkeypatch, {"search": 20_000})
    document = max_rate(tmp_path, searches=searches, hold=0)
    numbers = [step.get("search") for step in document.params["steps"]]
    assert numbers[0] is None and set(numbers[1:]) == set(range(1, searches + 1))
    assert len(document.runs) == len(document.params["steps"])

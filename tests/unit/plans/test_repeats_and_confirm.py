"""What a plan's repeats can decide, said before it runs, and the cells a confirmation round runs again."""

import json

import pytest

from kafkabench.plans.cells import expand
from kafkabench.plans.confirm import confirmation_cells, load_run_plan
from kafkabench.plans.loading import PlanError, load_plan
from kafkabench.plans.repeats import cost_family, repeats_line
from kafkabench.report.profile_cost import CostTable, ProfileCost
from kafkabench.report.verdict import MetricChange


@pytest.mark.parametrize("name, family, needed", [("broker-variables", 27, 7), ("security-cost", 20, 6),
                                                  ("a-a", 2, 5)])
def test_a_built_in_cost_plan_runs_the_repeats_its_table_needs(name, family, needed):
    loaded = load_plan(name)
    cells = expand(loaded)
    assert cost_family(loaded, cells) == family
    assert loaded.plan.repeats >= needed
    assert repeats_line(loaded, cells, 0.05) == (f"cost table: {family} tests judged together (q < 0.05); "
                                                 f"{loaded.plan.repeats} repeats can decide them ({needed} needed)")


def test_too_few_repeats_are_said_before_the_run(tmp_path):
    plan = tmp_path / "plan.yaml"
    plan.write_text("name: few\nrepeats: 4\nprofiles: [default, durable]\nbaseline_profile: default\n"
                    "scenarios:\n  - {lab: produce, size: 100, count: 1000}\n")
    loaded = load_plan(str(plan))
    line = repeats_line(loaded, expand(loaded), 0.05)
    assert line == ("cost table: 3 tests judged together (q < 0.05): 4 repeats cannot decide any of them, 5 a side "
                    "can (set repeats:); its verdicts will read cannot decide")
    assert repeats_line(load_plan("quick"), expand(load_plan("quick")), 0.05) is None  # no baseline: no table


def change(metric, verdict):
    return MetricChange(metric=metric, better="lower", a_n=6, b_n=6, a_median=1, b_median=2, change_pct=100,
                        ci_low_pct=50, ci_high_pct=150, p_value=0.002, q_value=0.004, verdict=verdict, reason="")


def test_a_confirmation_runs_every_repeat_of_exactly_the_cells_behind_a_verdict():
    loaded = load_plan("broker-variables")
    cells = expand(loaded)
    table = CostTable(baseline="default", fdr=0.05, family=27, note=None, costs=[
        ProfileCost(scenario="image-30fps", client="java", run="ping_pong", profile="g1-region-4m", baseline="default",
                    samples=(8, 8), metrics=[change("stats.e2e.p99_ms", "improvement")]),
        ProfileCost(scenario="small-fixed-rate", client="confluent", run="produce", profile="kafka-4.1.2",
                    baseline="default", samples=(8, 8), metrics=[change("stats.e2e.p50_ms", "within noise")])])
    again = confirmation_cells(cells, table)
    assert {(c.name, c.round) for c in again} == {("image-30fps-default", "confirm"),
                                                  ("image-30fps-g1-region-4m", "confirm")}
    assert [c.index for c in again] == list(range(1, 17)) and [c.repeat for c in again[:4]] == [1, 1, 2, 2]
    assert again[0].metadata("broker-variables")["round"] == "confirm" and "round" not in cells[0].metadata("p")


def test_a_run_directory_gives_back_its_plan(tmp_path):
    (tmp_path / "profiles").mkdir()
    (tmp_path / "profiles" / "mine.yaml").write_text("producer: {linger.ms: 7}\n")
    plan = tmp_path / "plan.yaml"
    plan.write_text("name: mine\nrepeats: 3\nprofiles: [default, mine]\nbaseline_profile: default\n"
                    "scenarios:\n  - {lab: produce, size: 100, count: 1000}\n")
    run = tmp_path / "run"
    run.mkdir()
    with pytest.raises(PlanError, match="not a plan's run directory"):
        load_run_plan(run)
    (run / "plan.yaml").write_text(plan.read_text())
    (run / "run.json").write_text(json.dumps({"source": "elsewhere/plan.yaml"}))
    with pytest.raises(PlanError, match="profile 'mine': not found next to the plan"):
        load_run_plan(run)  # the source is gone and the copy has no profiles beside it
    (run / "run.json").write_text(json.dumps({"source": str(plan)}))
    assert load_run_plan(run).profiles["mine"].producer == {"linger.ms": 7}
    (run / "run.json").write_text(json.dumps({"source": "built-in plan a-a"}))
    (run / "profiles").mkdir()  # as the runner keeps them
    (run / "profiles" / "mine.yaml").write_text("producer: {linger.ms: 7}\n")
    assert load_run_plan(run).plan.name == "mine"  # the built-in says otherwise now: the copy is what ran

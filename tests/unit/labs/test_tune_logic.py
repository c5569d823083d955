"""The tune's decisions without a broker: what is refused before a trial, what --keep holds, when a candidate is
recommended, and a study that resumes from its journal."""

import pytest

from kafkabench.errors import ConfigError
from kafkabench.labs.tune.recommend import Candidate, recommend
from kafkabench.labs.tune.baseline import kept_settings
from kafkabench.labs.tune.run import check_tune
from kafkabench.labs.tune.scenario import TuneScenario
from kafkabench.labs.tune.space import load_space
from kafkabench.labs.tune.study import completed, open_study
from kafkabench.labs.tune.trial import refusal, trial_scenario


@pytest.mark.parametrize("settings, reason", [
    ({"consumer": {"max.partition.fetch.bytes": "65536"}}, "cannot fit the 1302245-byte payload"),
    ({"producer": {"linger.ms": "200", "delivery.timeout.ms": "100"}}, "`message.timeout.ms` must be greater than `linger.ms`"),
    ({"producer": {"enable.idempotence": "true", "max.in.flight.requests.per.connection": "20"}},
     "`max.in.flight` must be set <= 5 when `enable.idempotence` is true"),
])
def test_settings_the_client_would_refuse_never_reach_a_trial(settings, reason):
    assert reason in refusal(trial_scenario(TuneScenario(), settings, "tune trial 7"))


def test_settings_the_client_takes_are_not_refused():
    assert refusal(trial_scenario(TuneScenario(), {"producer": {"linger.ms": "0.5"}}, "tune trial 7")) is None


def test_every_proposal_of_the_shipped_space_is_either_run_or_refused_with_a_reason():
    """A sample of the space's corners: each is judged by the client before any trial (no exception escapes)."""
    import optuna

    space = load_space("confluent")
    study = optuna.create_study(sampler=optuna.samplers.RandomSampler(seed=3))
    for _ in range(30):
        trial = study.ask(space.distributions())
        reason = refusal(trial_scenario(TuneScenario(size=1000), space.settings(trial.params), "t"))
        assert reason is None or isinstance(reason, str) and reason
        study.tell(trial, 0.0)


def test_keep_routes_each_setting_to_its_role_and_leaves_it_out_of_the_space():
    scenario = TuneScenario(keep="acks=all,min.insync.replicas=2,linger.ms=1", compression="lz4")
    kept = kept_settings(scenario)
    assert kept["producer"] == {"acks": "all", "linger.ms": "1", "compression.type": "lz4"}
    assert kept["topic"] == {"min.insync.replicas": "2"}
    keys = {d.key for d in check_tune(scenario).dimensions}
    assert "producer.linger.ms" not in keys and "producer.compression" not in keys


def test_keep_refuses_what_no_role_has():
    with pytest.raises(ConfigError, match="--keep lingr.ms: not a producer, consumer or topic setting"):
        kept_settings(TuneScenario(keep="lingr.ms=5"))


def test_a_candidate_within_noise_of_the_default_is_not_recommended():
    default = Candidate("default", {}, [10.0, 10.4, 9.8, 10.1, 10.2], [True] * 5)
    close = Candidate("trial 4", {"producer": {"linger.ms": "1"}}, [10.1, 9.9, 10.3, 9.7, 10.0], [True] * 5)
    decided = recommend(default, [close], "e2e p50")
    assert decided.chosen is None and "the default is as good as anything found" in decided.reason


def test_a_candidate_better_beyond_noise_and_always_feasible_is_recommended_with_its_interval():
    default = Candidate("default", {}, [10.0, 10.4, 9.8, 10.1, 10.2, 10.3], [True] * 6)
    better = Candidate("trial 9", {"producer": {"linger.ms": "0.1"}}, [6.0, 6.2, 5.9, 6.1, 6.3, 6.0], [True] * 6)
    worse = Candidate("trial 3", {}, [12.0, 12.2, 11.9, 12.1, 12.3, 12.2], [True] * 6)
    decided = recommend(default, [worse, better], "e2e p50")
    assert decided.chosen is better
    assert decided.reason.startswith("trial 9: e2e p50 -") and "95 %" in decided.reason and "q = " in decided.reason
    assert decided.changes["trial 3"].verdict == "regression"


def test_the_finalists_are_one_family_so_re_runs_too_few_for_it_cannot_decide():
    default = Candidate("default", {}, [10.0, 10.4, 9.8, 10.1], [True] * 4)
    better = Candidate("trial 9", {}, [6.0, 6.2, 5.9, 6.1], [True] * 4)
    worse = Candidate("trial 3", {}, [12.0, 12.2, 11.9, 12.1], [True] * 4)
    assert recommend(default, [better], "e2e p50").chosen is better  # alone: 4 against 4 reach p 0.029
    decided = recommend(default, [worse, better], "e2e p50")  # two: q = 2 p cannot go below 0.057
    assert decided.chosen is None
    assert decided.changes["trial 9"].verdict == "cannot decide" and "5 a side can" in decided.changes["trial 9"].reason


def test_an_infeasible_candidate_is_never_recommended_however_fast():
    default = Candidate("default", {}, [10.0, 10.4, 9.8, 10.1, 10.2], [True] * 5)
    fast = Candidate("trial 2", {}, [1.0, 1.1, 0.9, 1.0, 1.2], [True, True, False, True, True])
    assert recommend(default, [fast], "e2e p50").chosen is None


def test_where_the_default_misses_a_check_a_candidate_that_never_does_is_recommended_on_that_ground():
    default = Candidate("default", {}, [10.0, 10.4, 9.8, 10.1, 10.2], [True, False, True, True, True])
    steady = Candidate("trial 5", {}, [10.1, 10.0, 10.2, 9.9, 10.3], [True] * 5)
    decided = recommend(default, [steady], "e2e p50")
    assert decided.chosen is steady and "the default missed one in 1 of 5" in decided.reason


def test_a_study_resumes_from_its_journal_and_refuses_another_setup(tmp_path):
    journal = tmp_path / "study.journal"
    setup = {"goal": "latency", "client": "confluent", "rate": 30}
    first = open_study(journal, setup, seed=1)
    for value in (3.0, 2.0):
        trial = first.ask({"x": __import__("optuna").distributions.FloatDistribution(0, 1)})
        trial.set_user_attr("kind", "search")
        first.tell(trial, value)
    again = open_study(journal, setup, seed=1)
    assert [t.value for t in completed(again)] == [3.0, 2.0]
    with pytest.raises(ConfigError, match="holds a tune of another setup \\(rate differ\\)"):
        open_study(journal, {**setup, "rate": 60}, seed=1)


# ---- the throughput goal on a simulated system: a step passes below its knee -----------------------------

def simulated(monkeypatch, knee: float, unpaced: float, paused: tuple[int, ...] = ()):
    """run_step replaced by a system that passes every step below `knee` records/s, fails clearly above it, and sends
    `unpaced` unpaced; the steps numbered in `paused` (the probe is 0) fail by a pause, not clearly."""
    from kafkabench.labs.capacity import step as step_module
    from kafkabench.labs.capacity.step import Step
    from kafkabench.labs.tune import goals

    offered = []

    def run_step(kind, produce, phase, slos, metric, target, out_dir, listener):
        offered.append(produce.rate)
        if kind == "probe":
            return Step(kind, -1, achieved=unpaced, passed=True)
        if len(offered) - 1 in paused:
            return Step(kind, produce.rate, achieved=produce.rate, reasons=["e2e p99 80 ms (95 % up to 90) > 50 ms"])
        passed = produce.rate <= knee
        return Step(kind, produce.rate, achieved=produce.rate, passed=passed, clearly=not passed,
                    reasons=[] if passed else ["e2e p99 80 ms (95 % up to 90) > 50 ms"])

    monkeypatch.setattr(goals, "run_step", run_step)
    monkeypatch.setattr(step_module, "run_step", run_step)  # the probe's (run_probe)
    return offered


def throughput_goal():
    from kafkabench.labs.tune.goals import ThroughputGoal

    return ThroughputGoal(TuneScenario(goal="throughput", size=1000, slo=["p99=50ms"], precision=0.05, max_steps=10))


def test_a_throughput_trial_searches_from_a_quarter_of_its_probe_to_the_knee(monkeypatch):
    offered = simulated(monkeypatch, knee=30_000, unpaced=50_000)
    measured = throughput_goal().measure(trial_scenario(TuneScenario(size=1000), {}, "t"), None, None, None, None)
    assert offered[:3] == [-1, 12_500, 25_000]  # the probe, then a quarter of it, doubling
    assert measured.feasible and 30_000 / 1.05 <= measured.objective.value <= 30_000 < measured.objective.high
    assert len(offered) <= 1 + 10


def test_a_throughput_trial_that_cannot_beat_the_best_stops_at_its_probe_or_its_first_step(monkeypatch):
    goal, produce = throughput_goal(), trial_scenario(TuneScenario(size=1000), {}, "t")
    offered = simulated(monkeypatch, knee=30_000, unpaced=20_000)
    slow = goal.measure(produce, None, None, None, incumbent=45_000)
    assert offered == [-1] and not slow.feasible and "it cannot sustain 47,250" in slow.pruned
    offered = simulated(monkeypatch, knee=30_000, unpaced=50_000)
    failing = goal.measure(produce, None, None, None, incumbent=40_000)
    assert offered == [-1, 42_000] and "42,000 records/s, the best so far plus the precision, failed" in failing.pruned
    # the study is told the value each cannot reach, as infeasible (the Gaussian process sees only complete trials)
    assert (goal.values(slow), goal.values(failing)) == ([2 * 20_000], [42_000])  # the search's ceiling: 2x unpaced
    assert goal.constraints(slow) == goal.constraints(failing) == {"checks": 1.0}
    offered = simulated(monkeypatch, knee=60_000, unpaced=50_000)
    better = goal.measure(produce, None, None, None, incumbent=40_000)
    assert offered[:2] == [-1, 42_000] and better.feasible and better.objective.value > 42_000
    offered = simulated(monkeypatch, knee=60_000, unpaced=50_000, paused=(1,))
    paused = goal.measure(produce, None, None, None, incumbent=40_000)
    assert offered[:3] == [-1, 42_000, 42_000] and paused.feasible  # a pause is not a reason to stop the trial


def test_throughput_candidates_are_compared_higher_is_better():
    default = Candidate("default", {}, [10_000, 10_400, 9_800, 10_100, 10_200], [True] * 5)
    faster = Candidate("trial 4", {}, [15_000, 15_300, 14_900, 15_100, 15_200], [True] * 5)
    decided = recommend(default, [faster], "sustainable records/s", better="higher")
    assert decided.chosen is faster and decided.changes["trial 4"].verdict == "improvement"
    assert decided.reason.endswith("; the default's own 5 re-runs: sustainable records/s median 10,100, 9,800 to "
                                   "10,400")


def test_every_recommendation_line_ends_with_the_defaults_own_spread():
    default = Candidate("default", {}, [10.0, 10.4, 9.8, 10.1, 10.2], [True] * 5)
    close = Candidate("trial 4", {}, [10.1, 9.9, 10.3, 9.7, 10.0], [True] * 5)
    assert recommend(default, [close], "e2e p50").reason.endswith(
        "; the default's own 5 re-runs: e2e p50 median 10.1, 9.8 to 10.4")
    assert recommend(Candidate("default", {}, [12.0], [True]), [], "e2e p50").reason.endswith(
        "; the default's own 1 re-run: e2e p50 12, its spread unknown")


def test_a_run_that_failed_beside_a_whole_cluster_fails_its_trial_and_the_tune_goes_on(monkeypatch, tmp_path):
    """A Java producer whose batches cannot fit its buffer.memory fails its run: with every broker still answering,
    that is the trial's settings, not the cluster; a broker missing, or three such runs in a row, end the tune."""
    from kafkabench.core.events import SILENT
    from kafkabench.core.results import ResultDocument
    from kafkabench.labs.capacity.step import Step, StepsEnded
    from kafkabench.labs.tune import run as tune_run
    from kafkabench.labs.tune.goals import Measured

    document = ResultDocument(lab="tune", created_at="now", cluster={"brokers": 1})
    tune = tune_run._Tune(TuneScenario(size=1000, goal="throughput"), load_space("confluent"), None, tmp_path,
                          document, SILENT)
    tune.study, tune.baseline = open_study(tmp_path / "s.journal", {}, 0), {}

    def failed(number):
        step = Step("probe", -1, error="producer 1: BufferExhaustedException: Failed to allocate 7341097 bytes")
        return tune_run._Trial(number, "search", {}, Measured(None, [step], None, ["the probe failed"]))

    whole = [True]
    monkeypatch.setattr(tune, "_cluster_whole", lambda: whole[0])
    tune._keep(failed(6))
    assert document.notes[-1].startswith("trial 6 (probe unpaced) failed: producer 1: BufferExhaustedException")
    assert document.notes[-1].endswith("it counts as failed and the tune goes on")
    tune._keep(tune_run._Trial(7, "search", {}, Measured(None, [Step("trial", 1000)], None, [])))  # a run that worked
    tune._keep(failed(8))
    tune._keep(failed(9))
    with pytest.raises(StepsEnded, match="^trial 10 "):  # three runs failing one after another
        tune._keep(failed(10))
    whole[0], tune.failed_in_a_row = False, 0
    with pytest.raises(StepsEnded, match="^trial 11 "):  # a broker gone
        tune._keep(failed(11))


def test_a_trial_stopped_early_is_listed_as_pruned_without_a_value(tmp_path):
    """The study holds its bound (infeasible, so never a finalist nor the incumbent); the result lists no figure."""
    from kafkabench.labs.tune.study import best_distinct, trial_entry

    study = open_study(tmp_path / "s.journal", {}, 0, ("maximize",))
    for value, pruned, checks in ((30_000, None, -1.0), (42_000, "42,000 records/s ... failed", 1.0)):
        trial = study.ask()
        trial.set_constraint("checks", checks)
        trial.set_user_attr("settings", {"producer": {"linger.ms": str(value)}})
        trial.set_user_attr("figures", {"pruned": pruned})
        study.tell(trial, value)
    entries = [trial_entry(t) for t in study.get_trials()]
    assert [(e["state"], e["value"]) for e in entries] == [("complete", 30_000), ("pruned", None)]
    assert [t.number for t in best_distinct(study, higher=True, count=3)] == [0]

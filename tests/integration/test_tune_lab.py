"""`kafkabench tune` on the real broker, with a small budget over two settings: it measures the default and the
presets, re-measures the best against the default, writes the study, a profile a plan accepts, properties files a
lab accepts, and a result whose report draws every trial."""

import subprocess
import sys

import pytest

from kafkabench.core.results import read_result
from kafkabench.report.collect import collect
from kafkabench.report.html import result_charts

pytestmark = pytest.mark.integration

SPACE = """\
producer:
  linger.ms: {low: 0.1, high: 20, log: true}
consumer:
  fetch.max.wait.ms: {low: 1, high: 500, log: true}
"""


# what a tune says when a machine too busy for any trial to hold 98 % of its offered rate left nothing to re-measure
NONE_FEASIBLE = "no trial met every check: the default is as good as anything found"


def none_feasible(trials: list[dict]) -> bool:
    return not any(t["feasible"] for t in trials if t["kind"] != "default")


def kafkabench(*args: str, timeout: float = 600) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "kafkabench", *args], capture_output=True, text=True,
                          stdin=subprocess.DEVNULL, timeout=timeout)


def test_a_small_latency_tune_writes_what_plans_and_labs_take(kafka_cluster, tmp_path):
    space, out = tmp_path / "space.yaml", tmp_path / "tune"
    space.write_text(SPACE)
    bootstrap = ["-b", kafka_cluster.bootstrap_servers]
    done = kafkabench("tune", "latency", "--size", "1000", "--rate", "100", "--slo", "p99=2s", "--space", str(space),
                      "--trials", "2", "--noise-runs", "2", "--finalists", "1", "--final-runs", "2",
                      "--settle", "0.25", "--measure", "1", *bootstrap, "--out", str(out))
    assert done.returncode == 0, done.stdout + done.stderr
    document = read_result(out)
    trials = document.params["trials"]
    assert [t["kind"] for t in trials] == ["default", "default", "preset latency", "preset throughput"]
    for trial in trials:
        assert trial["state"] == "complete" and trial["objective"][1] <= trial["value"] <= trial["objective"][2]
        assert set(trial["params"]) == {"producer.linger.ms", "consumer.fetch.max.wait.ms"}
    assert trials[2]["settings"] == {"producer": {"linger.ms": "0"}, "consumer": {"fetch.max.wait.ms": "100"}, "topic": {}}
    assert trials[2]["params"]["producer.linger.ms"] == 0.1  # the profile runs as it is; the study places it at the low end
    final = document.params["final"]
    assert document.params["stop_reason"] == "2 trials measured (--trials)"
    recommendation = document.params["recommendation"]
    if none_feasible(trials):  # CI once: 35-53 % of 100/s, so no finalist, and the tune says so
        assert [(e["label"], e["feasible"]) for e in final] == [("default", [])]
        assert recommendation["reason"] == NONE_FEASIBLE
        return
    assert [entry["label"] for entry in final][0] == "default" and all(len(e["feasible"]) == 2 for e in final)
    # 2 re-runs each cannot show a change beyond noise: the default stays and the tune says why, unless the default
    # missed a check in a re-run (a busy machine) where the finalist met every one
    if recommendation["label"] == "default":
        assert "the default is as good as anything found" in recommendation["reason"]
    else:
        assert "where the default missed one" in recommendation["reason"]
    assert "recommendation: " in done.stdout + done.stderr
    assert len(document.runs) == len(trials) + 2 * len(final)  # every measured run kept, with its histograms
    assert (out / "study.journal").stat().st_size > 0

    checked = kafkabench("run", "--dry-run", str(out / "tuned-plan.yaml"))
    assert checked.returncode == 0, checked.stdout + checked.stderr
    ran = kafkabench("latency", "--clients", "confluent", "--size", "1000", "--count", "20", "--warmup", "2",
                     "--producer-config", str(out / "tuned-producer.properties"),
                     "--consumer-config", str(out / "tuned-consumer.properties"), *bootstrap, "--out", str(tmp_path / "lat"))
    assert ran.returncode == 0, ran.stdout + ran.stderr

    [entry] = collect([out])["results"]
    [chart] = [c for c in result_charts(entry) if c["chart"] == "tune-trials"]
    drawn = sorted(x for trace in chart["figure"]["data"] if trace["name"] != "recommended" for x in trace["x"])
    assert drawn == [t["number"] for t in trials]


def test_a_small_pareto_tune_samples_the_rate_and_re_measures_the_front_against_the_default(kafka_cluster, tmp_path):
    space, out = tmp_path / "space.yaml", tmp_path / "pareto"
    space.write_text(SPACE)
    # measured 2 s after 0.5 s: in 1 s after 0.25 s a loaded machine's trials missed the achieved-rate and lag
    # checks (97.2 % of the offered rate, lag growing), and no trial was left for the front; rates up to 1,200/s,
    # not 3,000: under CI's load every trial at 480-1,500/s once missed them too (161 of 482/s achieved)
    done = kafkabench("tune", "pareto", "--size", "1000", "--max-rate", "1200", "--slo", "p99=2s", "--space",
                      str(space), "--trials", "3", "--noise-runs", "2", "--finalists", "1", "--final-runs", "2",
                      "--settle", "0.5", "--measure", "2", "-b", kafka_cluster.bootstrap_servers, "--out", str(out))
    assert done.returncode == 0, done.stdout + done.stderr
    document = read_result(out)
    trials = document.params["trials"]
    assert document.params["rates"] == [12, 1200]
    assert [t["kind"] for t in trials][:4] == ["default", "default", "preset latency", "preset throughput"]
    assert [round(t["params"]["rate"]) for t in trials[:4]] == [75, 300, 600, 600]
    for trial in trials:
        assert 12 <= trial["params"]["rate"] <= 1200
        assert trial["offered"] == pytest.approx(trial["params"]["rate"], abs=0.1)
        assert trial["state"] == "complete" and trial["objective"][0] == trial["value"]
    front = document.params["front"]
    if none_feasible(trials):  # CI once had every trial from 193/s up reach 51-78 % of its rate, and no front
        assert front == [] and len(document.runs) == len(trials)
        assert document.params["recommendation"]["reason"] == NONE_FEASIBLE
        return
    assert len(front) == 1 and len(front[0]["values"]) == len(front[0]["default_values"]) == 2
    assert front[0]["label"] in {f"trial {t['number']}" for t in trials if t["kind"] != "default"}
    assert "front: " in done.stdout + done.stderr
    assert len(document.runs) == len(trials) + 4

    [entry] = collect([out])["results"]
    [chart] = [c for c in result_charts(entry) if c["chart"] == "tune-front"]
    drawn = sorted(n for trace in chart["figure"]["data"] if trace["mode"] == "markers" and trace["name"] in
                   ("the default", "meets every check", "fails a check") for n in trace["customdata"])
    assert drawn == [t["number"] for t in trials]


def test_a_latency_tune_one_record_at_a_time_runs_the_latency_labs_ping_pong(kafka_cluster, tmp_path):
    space, out = tmp_path / "space.yaml", tmp_path / "one"
    space.write_text(SPACE)
    done = kafkabench("tune", "latency", "--one-at-a-time", "--size", "1000", "--count", "20", "--warmup", "2",
                      "--slo", "p99=2s", "--space", str(space), "--trials", "2", "--noise-runs", "2", "--finalists",
                      "1", "--final-runs", "2", "-b", kafka_cluster.bootstrap_servers, "--out", str(out))
    assert done.returncode == 0, done.stdout + done.stderr
    document = read_result(out)
    trials = document.params["trials"]
    assert [t["kind"] for t in trials] == ["default", "default", "preset latency", "preset throughput"]
    for trial in trials:
        assert trial["state"] == "complete" and trial["feasible"] and trial["offered"] == -1
        assert trial["objective"][1] <= trial["value"] <= trial["objective"][2]
    assert all(run.stats["e2e"].count == 20 for run in document.runs)  # the measured records, warm-up left out
    assert "one record at a time" in done.stdout + done.stderr
    plan = (out / "tuned-plan.yaml").read_text()
    assert "lab: latency" in plan and "rate:" not in plan
    checked = kafkabench("run", "--dry-run", str(out / "tuned-plan.yaml"))
    assert checked.returncode == 0, checked.stdout + checked.stderr


BROKER_SPACE = """\
broker:
  num.io.threads: {choices: [2, 3]}
jvm:
  "-XX:G1HeapRegionSize=": {choices: [4m]}
"""


def test_a_tune_reaching_past_the_client_runs_each_broker_variant_on_brokers_of_its_own(kafka_cluster, tmp_path):
    from kafkabench.cluster import EmbeddedCluster
    from kafkabench.cluster.target import Target
    from kafkabench.core.events import SILENT
    from kafkabench.errors import ConfigError
    from kafkabench.labs.tune.run import run_tune
    from kafkabench.labs.tune.scenario import TuneScenario

    space = tmp_path / "space.yaml"
    space.write_text(BROKER_SPACE)
    scenario = TuneScenario(goal="latency", one_at_a_time=True, size=1000, count=5, warmup=1, trials=3, noise_runs=1,
                            finalists=1, final_runs=1, space=space)
    with pytest.raises(ConfigError, match="broker num.io.threads, jvm -XX:G1HeapRegionSize=: these need brokers "
                                          "kafkabench starts"):
        run_tune(scenario, Target.external(kafka_cluster.bootstrap_servers), tmp_path / "refused", SILENT)
    if not isinstance(kafka_cluster, EmbeddedCluster):
        return
    import tempfile
    from pathlib import Path

    clusters_before = set(Path(tempfile.gettempdir()).glob("kafkabench-tune-brokers-*"))
    document = run_tune(scenario, Target.embedded(kafka_cluster), tmp_path / "tune", SILENT)
    trials = document.params["trials"]
    search = [t for t in trials if t["kind"] == "search"]
    assert [t["kind"] for t in trials][0] == "default" and trials[0]["settings"] == {}
    assert search and all(t["state"] == "complete" for t in search), trials
    for trial in search:  # never the brokers' own: each ran on a cluster of its own, warmed first
        assert trial["settings"]["broker"]["num.io.threads"] in ("2", "3")
        assert trial["settings"]["jvm"] == {"-XX:G1HeapRegionSize=": "4m"}
    assert set(Path(tempfile.gettempdir()).glob("kafkabench-tune-brokers-*")) == clusters_before  # stopped, removed

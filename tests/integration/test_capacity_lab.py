"""The capacity lab on the real broker: a short max-rate search that ends with a confirmed rate and its steps, a
sweep of three rates, and SLOs it cannot read refused before anything runs."""

import json
import subprocess
import sys

import pytest

from kafkabench.core.results import read_histogram, read_result
from kafkabench.labs.capacity.figures import Interval
from kafkabench.labs.capacity.slo import parse_slo
from kafkabench.labs.capacity.step import Step, judge

pytestmark = pytest.mark.integration


def kafkabench(*args: str, timeout: float = 600) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "kafkabench", *args], capture_output=True, text=True,
                          stdin=subprocess.DEVNULL, timeout=timeout)


def judged_again(step: dict, slos: list[str], metric: str = "e2e") -> list[str]:
    """The reasons judge() gives for a step's recorded figures: the verdict in the file is the one its figures make."""
    figures = Step(step["kind"], step["offered"], achieved=step["achieved"], errors=step["errors"], error=step["error"],
                   percentiles={name: Interval(*values) for name, values in step["percentiles_ms"].items()},
                   lag_slope=Interval(*step["lag_slope_s_per_s"]) if step["lag_slope_s_per_s"] else None)
    return judge(figures, [parse_slo(text) for text in slos], metric).reasons


def test_two_short_searches_end_with_a_rate_their_range_and_every_step_judged(kafka_cluster, tmp_path):
    # low rates of 100 B and a loose SLO: on an idle machine every step passes, raising to the ceiling, then holding
    # it; a machine busy enough to fail one still ends with steps that say why and a rate or none
    slos = ["p99=2s", "p50=1s"]
    done = kafkabench("max-rate", "--slo", slos[0], "--slo", slos[1], "--start-rate", "500", "--ceiling", "1000",
                      "--settle", "0.5", "--measure", "1", "--hold", "1", "--holds", "2", "--max-steps", "3",
                      "--searches", "2", "-b", kafka_cluster.bootstrap_servers, "--out", str(tmp_path))
    assert done.returncode == 0, done.stdout + done.stderr
    document = read_result(tmp_path)
    steps = document.params["steps"]
    assert 2 <= len(steps) <= 3 + 3 + 3 + 2 and steps[0]["kind"] == "search" and steps[0]["offered"] == 500
    numbers, holds = [s.get("search") for s in steps], sum(1 for s in steps if s["kind"] == "hold")
    assert numbers == sorted(n for n in numbers if n) + [None] * holds  # search 1's steps, search 2's, the holds
    for step in steps:
        assert step["reasons"] == judged_again(step, slos) and (step["verdict"] == "pass") == (not step["reasons"])
        p99 = step["percentiles_ms"]["p99"]
        assert 0 < p99[1] <= p99[0] <= p99[2] and set(step["percentiles_ms"]) == {"p99", "p50"}
        assert step["achieved"] > 0 and step["lag_slope_s_per_s"] is not None
    searches, sustainable = document.params["search_results"], document.params["sustainable"]
    assert len(searches) == 2 and sum(s["steps"] for s in searches) == sum(1 for s in steps if s["kind"] != "hold")
    if all(step["verdict"] == "pass" for step in steps):
        assert [(s["kind"], s["offered"]) for s in steps] == [("search", 500), ("search", 1000), ("search", 500),
                                                              ("search", 1000), ("hold", 1000), ("hold", 1000)]
        assert document.params["stop_reason"] == "; ".join(
            f"search {n}: passed at the ceiling, 1,000 records/s: the cluster may take more" for n in (1, 2))
        assert sustainable["records_per_s"] == 1000 and sustainable["held"] and sustainable["holds"] == 2
        assert sustainable["searches"] == {"count": 2, "found": [1000, 1000], "median": 1000, "low": 1000,
                                           "high": 1000, "spread": 0.0, "none": 0}
    else:
        passed = {s["offered"] for s in steps if s["verdict"] == "pass"}
        assert sustainable is None or sustainable["records_per_s"] in passed
    # one run per step with the measured part's histograms, read back exactly as counted
    assert [run.scenario for run in document.runs] == [step["kind"] for step in steps]
    for run in document.runs:
        e2e = read_histogram(tmp_path, run, "e2e")
        assert e2e.count == run.stats["e2e"].count > 0
    lines = done.stdout.replace("\n", " ")
    answer = f"sustainable: {sustainable['records_per_s']:,.0f} records/s" if sustainable else "no rate sustained"
    assert answer in lines
    assert "step 1 (search): 500 records/s offered" in done.stderr + done.stdout


def test_a_sweep_of_three_rates_gives_a_point_per_rate_with_intervals(kafka_cluster, tmp_path):
    done = kafkabench("max-rate", "--sweep", "200,400,800", "--repeats", "1", "--settle", "0.5", "--measure", "1",
                      "--slo", "p99=5s", "-X", "linger.ms=1", "-b", kafka_cluster.bootstrap_servers,
                      "--out", str(tmp_path), "--json")
    assert done.returncode == 0, done.stdout + done.stderr
    document = json.loads(done.stdout)
    steps = document["params"]["steps"]
    assert [(s["kind"], s["offered"]) for s in steps] == [("sweep", 200), ("sweep", 400), ("sweep", 800)]
    for step in steps:
        assert step["reasons"] == judged_again(step, ["p99=5s"])
        assert step["percentiles_ms"]["p99"][2] >= step["percentiles_ms"]["p99"][0] > 0
    passing = [s["offered"] for s in steps if s["verdict"] == "pass"]
    assert document["params"]["sustainable"] == ({"records_per_s": max(passing), "held": False, "from": "sweep"}
                                                 if passing else None)
    assert all(run["config"]["producer"]["linger.ms"] == "1" for run in document["runs"])


def test_a_backlog_drains_while_the_producers_go_on(kafka_cluster, tmp_path):
    # the build's first second a warm-up: in the backlog, its latencies a run of their own
    done = kafkabench("backlog", "--rate", "2000", "--backlog-seconds", "3", "--warmup", "1", "--max-drain", "60",
                      "-b", kafka_cluster.bootstrap_servers, "--out", str(tmp_path))
    assert done.returncode == 0, done.stdout + done.stderr
    document = read_result(tmp_path)
    figures = document.params["backlog"]
    assert figures["drained"] and 0 < figures["drain_s"] < 60
    assert figures["built_records"] >= 3 * 2000 * 0.9 and figures["built_bytes"] == figures["built_records"] * 100
    # catching up means reading faster than the producers write
    assert figures["catch_up_records_per_s"] > figures["produce_records_per_s"] > 0
    assert [run.scenario for run in document.runs] == ["warmup produce", "build produce", "drain produce",
                                                        "drain consume"]
    warmup, build = document.runs[:2]
    assert warmup.counters["records"] + build.counters["records"] == figures["built_records"]
    # the rate is held over the whole build (above); its first second also pays for connecting under CI's load
    # (1,545 of 2,000 once)
    assert 1 <= warmup.duration_s <= 1.5 and warmup.counters["records"] > 0
    for run in document.runs:
        metric = "e2e" if run.params["role"] == "consume" else "publish_latency"
        assert read_histogram(tmp_path, run, metric).count == run.stats[metric].count > 0
    assert f"drained a backlog of {figures['built_bytes'] / 1e6:,.1f} MB" in done.stdout.replace("\n", " ")


@pytest.fixture
def throttled_client(kafka_cluster):
    """A client id whose fetches the broker holds to 20 KB/s (a consumer byte-rate quota), removed afterwards."""
    from kafkabench.labs.throughput.apache import java_command

    client_id = "kafkabench-throttled"

    def quota(*change: str) -> None:
        done = subprocess.run([*java_command("org.apache.kafka.tools.ConfigCommand"), "--bootstrap-server",
                               kafka_cluster.bootstrap_servers, "--alter", *change, "--entity-type", "clients",
                               "--entity-name", client_id], capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stdout + done.stderr

    quota("--add-config", "consumer_byte_rate=20000")
    yield client_id
    quota("--delete-config", "consumer_byte_rate")


def test_a_backlog_that_cannot_drain_says_so_with_its_rates_and_ends_in_its_bound(kafka_cluster, throttled_client,
                                                                                   tmp_path):
    done = kafkabench("backlog", "--rate", "1000", "--backlog-seconds", "2", "--max-drain", "6",
                      "-X", f"client.id={throttled_client}", "-b", kafka_cluster.bootstrap_servers,
                      "--out", str(tmp_path))
    assert done.returncode == 0, done.stdout + done.stderr
    figures = read_result(tmp_path).params["backlog"]
    assert not figures["drained"] and figures["drain_s"] is None
    assert figures["catch_up_records_per_s"] < figures["produce_records_per_s"]
    assert figures["projected_drain_s"] is None and figures["left_records"] > 0
    assert "not drained within 6 s" in done.stderr + done.stdout
    assert "it never would: the consumers read no faster than the producers write" in done.stdout.replace("\n", " ")


@pytest.mark.parametrize("slo, says", [("p99=50", "give the limit a unit"), ("p100=5ms", "between p50 and p99.9"),
                                       ("latency<5ms", "write it as pNN=LIMIT")])
def test_an_slo_it_cannot_read_is_refused_in_one_line_before_anything_runs(slo, says, tmp_path):
    done = kafkabench("max-rate", "--slo", slo, "-b", "127.0.0.1:1", "--out", str(tmp_path), timeout=60)
    assert done.returncode != 0
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and says in lines[0] and "--slo" in lines[0], done.stderr
    assert not (tmp_path / "result.json").exists()

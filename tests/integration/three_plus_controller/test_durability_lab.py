"""The durability lab on 3 brokers beside a dedicated controller: the seed's cells on topics that really have
the asked settings, client refusals reported in the client's words, and the cluster whole after every cell."""

import os
import subprocess
import sys

import pytest

from kafkabench.admin import KafkaAdmin
from kafkabench.cluster.faults import EmbeddedFaults
from kafkabench.core.results import read_result
from kafkabench.labs.durability.availability import PROBE_SETTINGS

from tests.conftest import wait_for

pytestmark = [pytest.mark.integration, pytest.mark.multibroker]

# the lab leaves the cluster whole: a broker left dead or paused never gets there, while a loaded machine's followers
# may still be catching up for some seconds after the lab's own heal
HEALED_S = 60


def durability(cluster, out, *args):
    return subprocess.run([sys.executable, "-m", "kafkabench", "durability", "-b", cluster.bootstrap_servers,
                           "--out", str(out), "--count", "2000", "--warmup", "200", *args],
                          capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=600)


def durability_on_the_embedded_cluster(cluster, out, *args, wait=True):
    """Without -b: the lab finds the running embedded cluster, so it may stop and restart its brokers."""
    command = [sys.executable, "-m", "kafkabench", "durability", "--out", str(out), "--warmup", "200", *args]
    env = {**os.environ, "KAFKABENCH_CLUSTER_DIR": str(cluster.directory)}
    if wait:
        return subprocess.run(command, capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=900, env=env)
    return subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, stdin=subprocess.DEVNULL, env=env)


# one repeat of each cell; the long scenario runs two, each in an order of its own
@pytest.mark.parametrize("repeats", [1, pytest.param(2, marks=pytest.mark.long)])
def test_the_seed_preset_runs_every_cell_on_topics_with_the_asked_settings(cluster, tmp_path, repeats):
    done = durability(cluster, tmp_path / "seed", "--preset", "seed", "--repeats", str(repeats), "--seed", "7",
                      "--no-availability")
    assert done.returncode == 0, done.stderr
    document = read_result(tmp_path / "seed")
    assert document.params["seed"] == 7 and document.params["cells"] == ["yolo confluent", "throughput-rf3 confluent",
                                                                          "durable confluent"]
    produced = [run for run in document.runs if run.scenario == "produce"]
    assert len(produced) == 3 * repeats and all(run.counters["acked"] == 2000 and not run.error for run in produced)
    consumed = [(run.params["cell"], run.counters["received"], run.error) for run in document.runs if run.scenario == "consume"]
    # every acknowledged record is read; the seed's producer has idempotence off, so a batch retried after a late
    # answer on a loaded machine may be written twice (2,011 read in one CI run): more is a duplicate, never a loss
    assert all(received >= 2000 and not error for _, received, error in consumed), (consumed, document.notes)
    orders = [[run.params["cell"] for run in produced if run.params["repeat"] == r] for r in range(1, repeats + 1)]
    assert all(sorted(order) == sorted(document.params["cells"]) for order in orders), orders
    for run in produced:  # the description the lab read back from the cluster, not the request
        expected_rf = 2 if run.params["name"] == "yolo" else 3
        assert [len(p["replicas"]) for p in run.params["topic_description"]] == [expected_rf] * 2
        assert all(len(p["isr"]) == expected_rf for p in run.params["topic_description"])
    assert {run.params["name"]: run.params["effective_min_isr"] for run in produced} == {
        "yolo": 1, "throughput-rf3": 1, "durable": 2}
    assert "durable" in done.stdout and "ms/msg" in done.stdout and "vs fastest" in done.stdout
    with KafkaAdmin(cluster.bootstrap_servers) as admin:  # every cell's topic was dropped
        assert not [t for t in admin.topic_names() if t.startswith("kafkabench-durability-")]
    EmbeddedFaults(cluster).wait_healthy(HEALED_S)


def test_a_combination_the_client_refuses_is_reported_in_its_words_and_the_rest_runs(cluster, tmp_path):
    done = durability(cluster, tmp_path / "refused", "--acks", "1,all", "--idempotence", "on",
                      "--replication-factors", "1", "--min-isr", "2", "--repeats", "1")
    assert done.returncode == 0, done.stderr
    document = read_result(tmp_path / "refused")
    refused = document.params["refused"]
    assert list(refused) == ["p2 rf1 isr2 acks=1 idem=on confluent"]
    assert "acks" in refused["p2 rf1 isr2 acks=1 idem=on confluent"].lower()
    ran = [run for run in document.runs if run.scenario == "produce" and not run.error]
    assert [run.params["cell"] for run in ran] == ["p2 rf1 isr2 acks=all idem=on confluent"]
    assert ran[0].params["effective_min_isr"] == 1 and "capped to 1" in ran[0].params["min_isr_note"]
    assert "capped to 1" in done.stdout and "refused by the client" in done.stdout


def test_a_replication_factor_above_the_brokers_is_refused_before_anything_runs(cluster, tmp_path):
    done = durability(cluster, tmp_path / "five", "--replication-factors", "5")
    assert done.returncode != 0 and "replication factor 5 needs as many brokers; the cluster has 3" in done.stderr
    assert not (tmp_path / "five" / "result.json").exists()


def test_availability_of_a_durable_topic_accepts_with_a_follower_killed_and_refuses_with_two(cluster, tmp_path):
    # the long scenario's short version: the durable cell alone, its brokers killed (not paused first)
    done = durability_on_the_embedded_cluster(cluster, tmp_path / "durable", "--replication-factors", "3",
                                              "--min-isr", "2", "--acks", "all", "--count", "500", "--repeats", "1",
                                              "--availability", "--availability-faults", "kill")
    assert done.returncode == 0, done.stderr
    [group] = read_result(tmp_path / "durable").params["availability"]
    assert (group["replication_factor"], group["min_isr"], group["acks"], group["error"]) == (3, 2, "all", None)
    assert [(s["mode"], s["down"]) for s in group["steps"]] == [("kill", "one follower"), ("kill", "two brokers")]
    accepting_with_one_down_and_refusing_with_two(*group["steps"])
    assert "│ refused " in done.stdout
    EmbeddedFaults(cluster).wait_healthy(HEALED_S)
    assert all(b.state == "running" for b in cluster.status().brokers)


def accepting_with_one_down_and_refusing_with_two(one: dict, two: dict) -> None:
    for step in (one, two):  # the brokers down really left the ISR
        assert step["isr_shrunk_s"] is not None and not set(step["brokers"]) & set(step["isr"] or []), step
    assert one["writes"] == "accepted" and one["reads"]["ok"], one
    # refused at once: far below the probe's request.timeout.ms, after which a write the broker held is answered
    assert two["writes"] == "refused" and two["refusal"] == "NOT_ENOUGH_REPLICAS"
    assert two["refused_in_ms"] < PROBE_SETTINGS["request.timeout.ms"] / 4
    assert two["reads"]["ok"] and two["reads"]["records"] == one["reads"]["records"], two  # nothing more was acked


@pytest.mark.long(short="tests/integration/three_plus_controller/test_durability_lab.py::"
                        "test_availability_of_a_durable_topic_accepts_with_a_follower_killed_and_refuses_with_two")
def test_availability_durable_refuses_writes_with_two_brokers_down_and_throughput_keeps_accepting(cluster, tmp_path):
    done = durability_on_the_embedded_cluster(cluster, tmp_path / "availability", "--preset", "seed", "--count", "500",
                                              "--repeats", "1")
    assert done.returncode == 0, done.stderr
    groups = {(g["replication_factor"], g["min_isr"], g["acks"]): g for g in read_result(tmp_path / "availability").params["availability"]}
    assert set(groups) == {(2, 1, "1"), (3, 1, "1"), (3, 2, "all")} and not any(g["error"] for g in groups.values())
    for group in groups.values():
        assert [(s["mode"], s["down"]) for s in group["steps"]] == [
            ("pause", "one follower"), ("pause", "two brokers"), ("kill", "one follower"), ("kill", "two brokers")]
        for step in group["steps"]:  # the brokers down really left the ISR (or the partition lost its leader)
            assert step["isr_shrunk_s"] is not None and not set(step["brokers"]) & set(step["isr"] or [])
    durable = {(s["mode"], s["down"]): s for s in groups[(3, 2, "all")]["steps"]}
    for mode in ("pause", "kill"):
        accepting_with_one_down_and_refusing_with_two(durable[(mode, "one follower")], durable[(mode, "two brokers")])
    for step in groups[(3, 1, "1")]["steps"]:
        assert step["writes"] == "accepted" and step["acked"] == step["sent"] - step["unanswered"]
        assert step["reads"]["ok"]
    yolo = {(s["mode"], s["down"]): s for s in groups[(2, 1, "1")]["steps"]}
    assert yolo[("kill", "two brokers")]["writes"] == "no answer" and yolo[("kill", "two brokers")]["leader"] is None
    assert "│ refused " in done.stdout  # the refusal itself (NOT_ENOUGH_REPLICAS) is in --wide's "how" and the result
    EmbeddedFaults(cluster).wait_healthy(HEALED_S)
    assert all(b.state == "running" for b in cluster.status().brokers)


def test_a_broker_dying_mid_cell_ends_that_cell_in_one_line_and_the_run_goes_on(cluster, tmp_path):
    out = tmp_path / "dies"
    # --timeout: the dead broker's cell fails after that long without progress; 15 s, not 5, keeps the slowest stretch
    # of the healthy repeat on a loaded machine (a consumer joining its group, an admin call) well inside it
    running = durability_on_the_embedded_cluster(
        cluster, out, "--replication-factors", "1", "--partitions", "3", "--acks", "1", "--count", "40000",
        "--rate", "5000", "--timeout", "15", "--repeats", "2", "--no-availability", wait=False)
    try:
        def measuring() -> str | None:  # a cell's topic, once its measured records flow
            with KafkaAdmin(cluster.bootstrap_servers) as admin:
                topics = [t for t in admin.topic_names() if t.startswith("kafkabench-durability-")]
                return topics[0] if topics and sum(high for _low, high in admin.offsets(topics[0]).values()) > 2000 else None
        topic = wait_for(measuring, 120, "the first cell to be measured")
        with KafkaAdmin(cluster.bootstrap_servers) as admin:
            victim = admin.describe_topic(topic).partitions[0].leader
        cluster.kill_broker(victim)
        stdout, stderr = running.communicate(timeout=600)
    finally:
        if running.poll() is None:
            running.kill()
    assert running.returncode == 1, stdout + stderr
    document = read_result(out)
    first, second = ([run for run in document.runs if run.scenario == "produce" and run.params["repeat"] == r] for r in (1, 2))
    assert first[0].error and 0 < first[0].counters["acked"] < 40000  # partial figures kept
    assert not second[0].error and second[0].counters["acked"] == 40000  # the run went on, on a whole cluster
    assert f"restarted broker {victim} after the failed cell" in document.notes
    assert "1 cell run(s) did not finish" in stderr and stderr.count("\n") < 40
    EmbeddedFaults(cluster).wait_healthy(HEALED_S)


def test_a_java_cell_warms_up_in_its_own_worker_and_apache_runs_beside_it(cluster, tmp_path):
    done = durability(cluster, tmp_path / "java", "--clients", "java", "--acks", "all", "--warmup", "500",
                      "--repeats", "1", "--compare-apache")
    assert done.returncode == 0, done.stderr
    document = read_result(tmp_path / "java")
    by_client = {(run.client, run.scenario): run for run in document.runs}
    ours, consumed = by_client[("java", "produce")], by_client[("java", "consume")]
    # the warm-up records went before the consumer was positioned: exact counts on both sides
    assert ours.counters["acked"] == 2000 and consumed.counters["received"] == 2000 and not ours.error
    apache = by_client[("apache", "produce")]
    assert apache.params["cell"] == "p2 rf3 isr1 acks=all idem=off java (apache ProducerPerformance)"
    assert not apache.error and apache.counters["acked"] == 2000 and apache.throughput["records_per_s"] > 0
    assert apache.params["topic_description"] == ours.params["topic_description"]
    assert "ProducerPerformance" in done.stdout.replace("\n", " ")

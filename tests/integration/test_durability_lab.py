"""The durability lab on 3 brokers beside a dedicated controller: the seed's cells on topics that really have
the asked settings, client refusals reported in the client's words, and the cluster whole after every cell."""

import subprocess
import sys

import pytest

from kafkabench.admin import KafkaAdmin
from kafkabench.cluster.faults import EmbeddedFaults
from kafkabench.core.results import read_result

from tests.conftest import three_brokers

pytestmark = [pytest.mark.integration, pytest.mark.multibroker]


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    with three_brokers(tmp_path_factory.mktemp("durability"), controllers=1) as c:
        yield c


def durability(cluster, out, *args):
    return subprocess.run([sys.executable, "-m", "kafkabench", "durability", "-b", cluster.bootstrap_servers,
                           "--out", str(out), "--count", "2000", "--warmup", "200", *args],
                          capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=600)


def test_the_seed_preset_runs_every_cell_on_topics_with_the_asked_settings(cluster, tmp_path):
    done = durability(cluster, tmp_path / "seed", "--preset", "seed", "--repeats", "2", "--seed", "7")
    assert done.returncode == 0, done.stderr
    document = read_result(tmp_path / "seed")
    assert document.params["seed"] == 7 and document.params["cells"] == ["yolo confluent", "throughput-rf3 confluent",
                                                                          "durable confluent"]
    produced = [run for run in document.runs if run.scenario == "produce"]
    assert len(produced) == 6 and all(run.counters["acked"] == 2000 and not run.error for run in produced)
    assert all(run.counters["received"] == 2000 for run in document.runs if run.scenario == "consume")
    orders = [[run.params["cell"] for run in produced if run.params["repeat"] == r] for r in (1, 2)]
    assert sorted(orders[0]) == sorted(orders[1]) == sorted(document.params["cells"])
    for run in produced:  # the description the lab read back from the cluster, not the request
        expected_rf = 2 if run.params["name"] == "yolo" else 3
        assert [len(p["replicas"]) for p in run.params["topic_description"]] == [expected_rf] * 2
        assert all(len(p["isr"]) == expected_rf for p in run.params["topic_description"])
    assert {run.params["name"]: run.params["effective_min_isr"] for run in produced} == {
        "yolo": 1, "throughput-rf3": 1, "durable": 2}
    assert "durable" in done.stdout and "ms/msg" in done.stdout and "vs fastest" in done.stdout
    with KafkaAdmin(cluster.bootstrap_servers) as admin:  # every cell's topic was dropped
        assert not [t for t in admin.topic_names() if t.startswith("kafkabench-durability-")]
    EmbeddedFaults(cluster).wait_healthy(10)


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

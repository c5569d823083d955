"""The latency lab on a real broker: every client, integrity, the result contract, and failures that keep data."""

import json
import os
import subprocess
import sys

import pytest

from kafkabench import clients as client_registry
from kafkabench.cluster import EmbeddedCluster
from kafkabench.cluster.target import Target
from kafkabench.config.properties import parse_overrides
from kafkabench.core.results import read_histogram, read_result
from kafkabench.errors import ConfigError
from kafkabench.core.events import Listener
from kafkabench.labs.base import LabFailed
from kafkabench.labs.latency.scenario import LatencyScenario
from kafkabench.labs.latency.session import run_latency
from tests.conftest import embedded

pytestmark = pytest.mark.integration

SMALL = dict(size=100_000, count=20, warmup=2, rounds=4, timeout=15)
METRICS = ("e2e", "produce", "consume", "cold")


class Recorder(Listener):
    def __init__(self, on_progress=None):
        self.notes, self.ready, self.done = [], [], []
        self.on_progress = on_progress

    def note(self, message):
        self.notes.append(message)

    def progress(self, done, total, label=""):
        client, _, version = label.partition(" ")
        if done == 0:  # the client's worker is ready: its label says the version
            self.ready.append((client, version))
            return
        self.done.append((client, done))
        if self.on_progress:
            self.on_progress(client, done)


def target_of(cluster) -> Target:
    ours = isinstance(cluster, EmbeddedCluster)
    return Target.embedded(cluster) if ours else Target.external(cluster.bootstrap_servers)


def test_every_available_client_completes_with_checked_values(kafka_cluster, tmp_path):
    available = [c for c in client_registry.ALL_CLIENTS if client_registry.availability(c).available]
    assert {"confluent", "kafka-python", "http", "tcp"} <= set(available)
    listener = Recorder()
    document = run_latency(LatencyScenario(**SMALL), target_of(kafka_cluster), tmp_path, listener)

    assert [run.client for run in document.runs] == available
    assert [client for client, _ in listener.ready] == available
    for run in document.runs:
        assert run.error is None, run.client
        assert run.stats["e2e"].count == 20 and run.stats["cold"].count == 1, run.client
        assert run.counters == {"sent": 23, "acked": 23, "received": 23, "errors": 0, "out_of_range": 0}, run.client
        assert run.stats["e2e"].p50_ms >= run.stats["produce"].p50_ms > 0, run.client
        assert run.throughput["records_per_s"] > 0 and run.resources["cpu_s"] > 0, run.client
        assert run.client_version, run.client
        assert run.params["size_bytes"] == 100_000 and run.params["acks"] == "1"
        if run.client in client_registry.KAFKA_CLIENTS:
            assert run.config["topic"]["max.message.bytes"] == "1048588"
            assert run.config["producer"], run.client
            parts = run.params["broker_phases"]  # the broker's side of the 20 measured messages, and the client's
            if isinstance(kafka_cluster, EmbeddedCluster):
                assert parts["messages"] == 20 and parts["broker_ms"] > 0, (run.client, parts)
                assert parts["client_ms"] + parts["broker_ms"] == pytest.approx(run.stats["produce"].mean_ms)
                assert abs(parts["residual_ms"]) < 0.01 and parts["phases_ms"]["local (append)"] > 0
                way = parts["e2e"]  # the message's way: its Produce, then the fetch that delivered it
                assert way["clients_ms"] + way["broker_ms"] == pytest.approx(run.stats["e2e"].mean_ms)
                assert way["path_ms"]["produce: append"] == parts["phases_ms"]["local (append)"]
                assert way["path_ms"]["fetch: send"] > 0 and way["broker_ms"] == pytest.approx(sum(way["path_ms"].values()))
            else:
                assert parts["error"].startswith("not available: the brokers' request logs are on their own machines")
    # the files are the contract: read back, histograms included
    stored = read_result(tmp_path)
    assert stored.model_dump() == document.model_dump()
    raw = json.loads((tmp_path / "result.json").read_text())
    assert raw["schema"] == "kafkabench.result/1" and raw["lab"] == "latency"
    first = raw["runs"][0]
    assert set(first["stats"]["e2e"]) >= {"count", "mean_ms", "p50_ms", "p90_ms", "p99_ms", "p999_ms", "max_ms"}
    for run in stored.runs:
        for metric in METRICS:
            assert read_histogram(tmp_path, run, metric).count == run.stats[metric].count
    assert not list(tmp_path.glob(".payload-*"))


def test_a_too_small_explicit_producer_limit_fails_before_anything_is_sent(kafka_cluster, admin, tmp_path):
    before = set(admin._admin.list_topics(timeout=10).topics)
    request = LatencyScenario(**SMALL, clients=["confluent", "tcp"], overrides=parse_overrides(["max.request.size=60000"]))
    with pytest.raises(ConfigError, match=r"-X: max.request.size=60000 cannot fit the 100000-byte payload"):
        run_latency(request, target_of(kafka_cluster), tmp_path, Recorder())
    assert set(admin._admin.list_topics(timeout=10).topics) == before
    assert not (tmp_path / "result.json").exists()


def test_a_broker_killed_mid_run_ends_it_with_a_clear_error_and_keeps_what_was_measured(tmp_path):
    with embedded(brokers=1, directory=tmp_path / "cluster") as cluster:
        def kill_after_first_confluent_round(client, done):
            if client == "confluent" and done == 10:
                cluster.kill_broker(1)

        # timeout 10 s: a message after the kill fails the run after it; the messages before, the cold one on a fresh
        # cluster included, must fit in it on a loaded machine (3 s was close)
        request = LatencyScenario(size=100_000, count=40, warmup=1, rounds=4, timeout=10, clients=["confluent", "tcp"])
        with pytest.raises(LabFailed, match="confluent: .*partial results kept in") as failed:
            run_latency(request, target_of(cluster), tmp_path / "out", Recorder(kill_after_first_confluent_round))
    document = read_result(tmp_path / "out")
    assert document.error and document.error.startswith("confluent:")
    confluent, tcp = document.runs
    assert confluent.error and confluent.stats["e2e"].count == 10
    assert confluent.counters["errors"] == 1
    assert tcp.error is None and tcp.stats["e2e"].count == 10  # collected after the failure
    assert failed.value.document.error == document.error


def test_cli_json_document_matches_the_result_directory(kafka_cluster, tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "kafkabench", "latency", "--size", "50000", "--count", "6", "--warmup", "1", "--rounds", "2",
         "--clients", "confluent,tcp", "--bootstrap-servers", kafka_cluster.bootstrap_servers, "--out", str(tmp_path / "r"),
         "--json", "-X", "linger.ms=0", "--topic-config", "retention.ms=600000"],
        capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL, env={**os.environ, "COLUMNS": "200"},
    )
    assert done.returncode == 0, done.stderr
    printed = json.loads(done.stdout)
    assert printed == json.loads((tmp_path / "r" / "result.json").read_text())
    assert [r["client"] for r in printed["runs"]] == ["confluent", "tcp"]
    assert printed["runs"][0]["config"]["topic"]["retention.ms"] == "600000"
    assert "x floor" in done.stderr  # the table still reaches the terminal, on stderr


def test_cli_unknown_setting_is_one_line_with_a_suggestion(tmp_path):
    done = subprocess.run([sys.executable, "-m", "kafkabench", "latency", "-X", "lingr.ms=1", "--out", str(tmp_path)],
                          capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert done.returncode == 1
    assert done.stderr.strip().splitlines()[-1] == "error: -X: lingr.ms is not a Kafka producer or consumer setting; did you mean linger.ms?"

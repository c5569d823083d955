"""Secured embedded clusters for real: mTLS and SASL_SSL with SCRAM-SHA-512, every client through one Java-named
client.properties, users added while the cluster runs, and no password or key in anything a run wrote."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from kafkabench.cluster.listeners import CLIENT_USER, parse_listeners
from kafkabench.config.properties import read_properties_file
from tests.conftest import FAST_FAILOVER, embedded

pytestmark = pytest.mark.integration

CLIENTS = "confluent,kafka-python,aiokafka,java"


@pytest.fixture(scope="module")
def mtls(tmp_path_factory):
    with embedded(directory=tmp_path_factory.mktemp("mtls"), security=parse_listeners("mtls", "PLAIN")) as cluster:
        yield cluster


@pytest.fixture(scope="module")
def scram(tmp_path_factory):
    security = parse_listeners("sasl_ssl", "SCRAM-SHA-512")
    with embedded(directory=tmp_path_factory.mktemp("scram"), security=security) as cluster:
        yield cluster


def kafkabench(*args: str, cluster_dir: Path | None = None, timeout: float = 600) -> subprocess.CompletedProcess:
    env = {**os.environ, **({"KAFKABENCH_CLUSTER_DIR": str(cluster_dir)} if cluster_dir else {})}
    return subprocess.run([sys.executable, "-m", "kafkabench", *args], capture_output=True, text=True,
                          stdin=subprocess.DEVNULL, timeout=timeout, env=env)


def latency_with(properties: Path, bootstrap: str, out: Path) -> subprocess.CompletedProcess:
    """Every client, one settings file for producer and consumer alike, unchanged."""
    return kafkabench("latency", "-b", bootstrap, "--clients", CLIENTS, "--size", "100", "-n", "5", "--warmup", "1",
                      "--rounds", "1", "--producer-config", str(properties), "--consumer-config", str(properties),
                      "--out", str(out))


def every_client_ran(out: Path) -> dict[str, int]:
    document = json.loads((out / "result.json").read_text())
    return {run["client"]: run["counters"]["received"] for run in document["runs"] if not run.get("error")}


@pytest.mark.parametrize("name", ["mtls", "scram"])
def test_each_client_produces_and_consumes_through_one_java_named_file(name, request, tmp_path):
    cluster = request.getfixturevalue(name)
    properties = cluster.security.client_properties()
    done = latency_with(properties, cluster.bootstrap_servers, tmp_path / "out")
    assert done.returncode == 0, done.stderr
    assert every_client_ran(tmp_path / "out") == dict.fromkeys(CLIENTS.split(","), 7)  # cold, warm-up, 5 measured


def test_the_files_say_how_to_connect_and_keep_secrets_to_their_owner(scram):
    security = scram.security
    settings = {key: s.value for key, s in read_properties_file(security.client_properties()).items()}
    assert settings["security.protocol"] == "SASL_SSL" and settings["sasl.mechanism"] == "SCRAM-SHA-512"
    assert f'username="{CLIENT_USER}"' in settings["sasl.jaas.config"]
    assert settings["bootstrap.servers"] == scram.bootstrap_servers
    private = [security.client_properties(), security.secrets_dir / "users" / f"{CLIENT_USER}.password",
               security.tls().broker.key, security.tls().client.keystore]
    assert all(stat.S_IMODE(path.stat().st_mode) == 0o600 for path in private)
    assert stat.S_IMODE(security.secrets_dir.stat().st_mode) == 0o700
    status = json.loads(kafkabench("cluster", "status", "--json", cluster_dir=scram.directory).stdout)
    assert status["security"]["protocol"] == "SASL_SSL" and status["security"]["sasl_mechanism"] == "SCRAM-SHA-512"
    assert status["security"]["client_properties"] == str(security.client_properties())


def test_a_lab_on_the_running_secured_cluster_connects_by_itself(scram, tmp_path):
    done = kafkabench("latency", "--clients", "confluent,java", "--size", "100", "-n", "3", "--warmup", "1",
                      "--rounds", "1", "--out", str(tmp_path / "out"), cluster_dir=scram.directory)
    assert done.returncode == 0, done.stderr
    assert set(every_client_ran(tmp_path / "out")) == {"confluent", "java"}
    assert json.loads((tmp_path / "out" / "result.json").read_text())["cluster"]["listener"] == \
        "SASL_SSL (SCRAM-SHA-512, user bench)"


KNOWN_PASSWORD = "Known-Pa55word-4-grep"


def test_a_known_password_and_the_key_appear_in_nothing_a_run_wrote(scram, tmp_path):
    added = kafkabench("cluster", "add-user", "carol", "--password", KNOWN_PASSWORD, cluster_dir=scram.directory)
    assert added.returncode == 0, added.stderr
    properties = Path(added.stdout.strip())
    runs = [latency_with(properties, scram.bootstrap_servers, tmp_path / "out"),
            kafkabench("report", str(tmp_path / "out")),
            # a failing run with --debug: its traceback goes through the same scrubbing
            kafkabench("--debug", "latency", "-b", scram.bootstrap_servers, "--clients", "confluent", "-n", "1",
                       "--producer-config", str(properties), "-X", "ssl.truststore.location=/nonexistent/ca.pem",
                       "--out", str(tmp_path / "failed"))]
    assert runs[0].returncode == 0 and runs[1].returncode == 0 and runs[2].returncode != 0, runs[0].stderr
    secrets = [KNOWN_PASSWORD, *scram.security.tls().client.key.read_text().splitlines()[1:3]]
    written = [path for path in tmp_path.rglob("*") if path.is_file()]
    assert {path.name for path in written} >= {"result.json", "report.html", "report.csv"}
    texts = [run.stdout + run.stderr for run in runs] + [path.read_text(errors="replace") for path in written]
    texts += [scram.log_file(1).read_text(errors="replace")]
    for secret in secrets:
        assert not [text[:80] for text in texts if secret in text], secret


def test_a_user_added_while_the_cluster_runs_can_connect(scram, tmp_path):
    added = kafkabench("cluster", "add-user", "alice", cluster_dir=scram.directory)
    assert added.returncode == 0, added.stderr
    properties = Path(added.stdout.strip())
    assert 'username="alice"' in properties.read_text()
    done = kafkabench("check", "-b", scram.bootstrap_servers, "--producer-config", str(properties),
                      cluster_dir=scram.directory)
    assert done.returncode == 0, done.stderr
    assert "listener  SASL_SSL (SCRAM-SHA-512, user alice)" in done.stdout


PLAN = """
name: cost-check
repeats: 2
profiles: [plaintext, tls]
baseline_profile: plaintext
cluster: {brokers: 1, security: "plaintext,ssl"}
scenarios:
  - {name: small, lab: produce, size: 100, count: 2000}
"""


def test_a_plan_runs_each_profile_on_its_listener_and_prices_it_against_the_baseline(tmp_path):
    (tmp_path / "plan.yaml").write_text(PLAN)
    done = kafkabench("run", str(tmp_path / "plan.yaml"), "--out", str(tmp_path / "out"), cluster_dir=tmp_path / "cluster")
    assert done.returncode == 0, done.stderr
    listeners = {}
    for result in (tmp_path / "out").glob("*/result.json"):
        document = json.loads(result.read_text())
        listeners[document["plan"]["profile"]] = document["cluster"]["listener"]
    assert listeners == {"plaintext": "PLAINTEXT", "tls": "SSL"}
    table = json.loads((tmp_path / "out" / "cost.json").read_text())
    [cost] = table["costs"]
    assert (cost["profile"], cost["baseline"], cost["samples"]) == ("tls", "plaintext", [2, 2])
    assert table["family"] == 3 and "every verdict here reads cannot decide" in table["note"]  # 2 repeats a side
    assert {m["metric"] for m in cost["metrics"]} >= {"stats.publish_latency.p50_ms", "throughput.records_per_s"}
    assert "cost against the plaintext profile" in done.stdout


def test_a_wrong_password_ends_a_lab_before_it_starts_in_one_line(scram, tmp_path):
    wrong = tmp_path / "wrong.properties"
    right = scram.security.client_properties().read_text()
    wrong.write_text(right.replace(scram.security.password(CLIENT_USER), "not-the-password"))
    done = kafkabench("latency", "-b", scram.bootstrap_servers, "--clients", "confluent", "-n", "1",
                      "--producer-config", str(wrong), "--consumer-config", str(wrong), "--out", str(tmp_path / "out"),
                      timeout=60)
    assert done.returncode != 0
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert lines[-1].startswith("error: authentication failed for user 'bench' with SCRAM-SHA-512"), done.stderr
    assert "not-the-password" not in done.stderr + done.stdout


def test_host_names_unchecked_is_allowed_and_the_result_warns(mtls, tmp_path):
    properties = mtls.security.client_properties()
    done = kafkabench("latency", "-b", mtls.bootstrap_servers, "--clients", "confluent,kafka-python", "--size", "100",
                      "-n", "2", "--warmup", "0", "--rounds", "1", "--producer-config", str(properties),
                      "--consumer-config", str(properties), "-X", "ssl.endpoint.identification.algorithm=",
                      "--out", str(tmp_path / "out"))
    assert done.returncode == 0, done.stderr
    document = json.loads((tmp_path / "out" / "result.json").read_text())
    assert any(note.startswith("warning: ssl.endpoint.identification.algorithm is empty") for note in document["notes"])
    assert "ssl.endpoint.identification.algorithm is empty" in done.stderr + done.stdout
    assert set(every_client_ran(tmp_path / "out")) == {"confluent", "kafka-python"}


@pytest.mark.multibroker
def test_three_brokers_talk_over_their_secured_listener_and_heal_after_a_kill(tmp_path):
    from kafkabench.admin import KafkaAdmin
    from kafkabench.cluster.faults import EmbeddedFaults
    from kafkabench.roundtrip import round_trip

    security = parse_listeners("sasl_ssl,mtls", "SCRAM-SHA-256")
    with embedded(brokers=3, directory=tmp_path / "cluster", security=security,
                  broker_config_overrides=FAST_FAILOVER) as cluster:  # the killed broker's session ends in 3 s
        with KafkaAdmin(cluster.connection, timeout_s=30) as admin:
            admin.create_topic("replicated", partitions=3, replication_factor=3)
            assert admin.wait_until_usable("replicated").replication_factor == 3  # followers fetch over SASL_SSL
        cluster.kill_broker(2)
        cluster.restart_broker(2)
        EmbeddedFaults(cluster).wait_healthy(60, topics=["replicated"])
        assert round_trip(cluster.listener_connection("mtls")).size_bytes == 1024

"""The CLI end to end, as a user runs it from a shell: separate processes sharing one state file."""

import json
import os
import socket
import subprocess
import sys

import psutil
import pytest

from kafkabench.cluster.artifacts import DEFAULT_KAFKA_VERSION
from kafkabench.cluster.embedded import FAST_FAILOVER, QUIET_IDLE, SMALL_INTERNAL_TOPICS

pytestmark = [pytest.mark.integration, pytest.mark.multibroker]


def kafkabench(cluster_dir, *args, timeout=600):  # only ends a hang: 3 brokers start slowly on a loaded machine
    env = {**os.environ, "KAFKABENCH_CLUSTER_DIR": str(cluster_dir)}
    return subprocess.run([sys.executable, "-m", "kafkabench", *args], capture_output=True, text=True, env=env,
                          stdin=subprocess.DEVNULL, timeout=timeout)


def error_lines(done) -> list[str]:
    assert "Traceback" not in done.stderr
    return [line for line in done.stderr.splitlines() if line.startswith("error:")]


@pytest.fixture
def cluster_dir(tmp_path):
    yield tmp_path
    kafkabench(tmp_path, "cluster", "down", "--timeout", "10")  # whatever a failing test left running


def status(cluster_dir) -> dict:
    done = kafkabench(cluster_dir, "cluster", "status", "--json")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_three_broker_lifecycle_from_a_shell(cluster_dir):
    # a cluster as a user's tests would run it: short-lived JVMs (SHORT_LIVED_JVM_OPTIONS), small internal topics,
    # few threads waking while idle, and failing over as fast as the suite's fault tests (FAST_FAILOVER): the
    # restarted broker registers again once its killed predecessor's session has ended, 3 s instead of 9 s
    settings = FAST_FAILOVER | SMALL_INTERNAL_TOPICS | QUIET_IDLE
    up = kafkabench(cluster_dir, "cluster", "up", "--brokers", "3", "--jvm-option=-XX:TieredStopAtLevel=1",
                    *(f"--broker-config={key}={value}" for key, value in settings.items()))
    assert up.returncode == 0, up.stderr
    bootstrap = up.stdout.strip()
    assert bootstrap.count("127.0.0.1:") == 3

    report = status(cluster_dir)
    assert report["bootstrap_servers"] == bootstrap
    assert report["kafka_version"] == DEFAULT_KAFKA_VERSION
    assert [(b["id"], b["alive"]) for b in report["brokers"]] == [(1, True), (2, True), (3, True)]
    assert all(psutil.pid_exists(b["pid"]) for b in report["brokers"])
    pids = [b["pid"] for b in report["brokers"]]

    again = kafkabench(cluster_dir, "cluster", "up")
    assert again.returncode == 1
    assert error_lines(again) == [f"error: a cluster is already running in {cluster_dir} ({bootstrap}); "
                                  "use it, or stop it first with `kafkabench cluster down`"]

    assert kafkabench(cluster_dir, "cluster", "kill", "--broker", "2").returncode == 0
    assert [b["alive"] for b in status(cluster_dir)["brokers"]] == [True, False, True]
    assert not psutil.pid_exists(pids[1])

    restarted = kafkabench(cluster_dir, "cluster", "restart", "--broker", "2")
    assert restarted.returncode == 0, restarted.stderr
    broker2 = status(cluster_dir)["brokers"][1]
    assert broker2["alive"] and broker2["state"] == "running" and broker2["pid"] != pids[1]
    pids[1] = broker2["pid"]

    logs = kafkabench(cluster_dir, "cluster", "logs", "--broker", "2", "--lines", "5")
    assert logs.returncode == 0 and len(logs.stdout.splitlines()) == 5

    check = kafkabench(cluster_dir, "check")
    assert check.returncode == 0, check.stderr
    assert "read back and compared equal" in check.stdout

    down = kafkabench(cluster_dir, "cluster", "down")
    assert down.returncode == 0, down.stderr
    assert not any(psutil.pid_exists(pid) for pid in pids)
    gone = kafkabench(cluster_dir, "cluster", "status")
    assert gone.returncode == 1 and error_lines(gone) == [
        f"error: no embedded cluster in {cluster_dir}; start one with `kafkabench cluster up`"]
    assert kafkabench(cluster_dir, "cluster", "down").returncode == 0  # nothing to stop is not an error


def test_port_in_use_is_reported_before_starting(cluster_dir):
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        done = kafkabench(cluster_dir, "cluster", "up", "--port", str(port))
    assert done.returncode == 1
    [line] = error_lines(done)
    assert f"port {port} on 127.0.0.1 is in use" in line


def test_broker_that_fails_to_start_shows_its_log(cluster_dir):
    done = kafkabench(cluster_dir, "cluster", "up", "--broker-config", "authorizer.class.name=com.example.NoSuchAuthorizer")
    assert done.returncode == 1
    [line] = error_lines(done)
    log = cluster_dir / "node-1" / "broker.log"
    assert line == f"error: broker 1 exited during startup: java.lang.ClassNotFoundException: com.example.NoSuchAuthorizer; full log: {log}"
    assert log.exists()
    assert not (cluster_dir / "cluster.json").exists()


def test_invalid_broker_setting_is_reported_from_the_formatter(cluster_dir):
    done = kafkabench(cluster_dir, "cluster", "up", "--broker-config", "num.io.threads=lots")
    assert done.returncode == 1
    [line] = error_lines(done)
    assert "Invalid value lots for configuration num.io.threads" in line and "full log:" in line


@pytest.mark.parametrize("args, said", [
    (["-c", "num.io.thread=2"], "broker setting num.io.thread: Kafka 4.4.0 has no such setting"),
    (["--jvm-option=-Xmx1q"], "JVM option(s) -Xmx1q: the JVM refuses them: Invalid maximum heap size: -Xmx1q"),
    (["--kafka-version", "3.9.0"], "Kafka 3.9.0: kafkabench pins no such version; it has 4.0.2"),
])
def test_brokers_kafka_would_refuse_are_refused_before_any_starts(cluster_dir, args, said):
    done = kafkabench(cluster_dir, "cluster", "up", *args)
    assert done.returncode == 1
    [line] = error_lines(done)
    assert said in line
    assert not (cluster_dir / "cluster.json").exists() and not (cluster_dir / "node-1").exists()


def test_brokers_on_another_version_with_jvm_options_and_settings(cluster_dir):
    done = kafkabench(cluster_dir, "cluster", "up", "--kafka-version", "4.1.2", "--jvm-option=-XX:G1HeapRegionSize=4m",
                      "-c", "num.io.threads=2")
    assert done.returncode == 0, done.stderr
    assert "Kafka 4.1.2 ready" in done.stderr
    status = json.loads(kafkabench(cluster_dir, "cluster", "status", "--json").stdout)
    assert (status["kafka_version"], status["broker_settings"], status["jvm_options"]) == (
        "4.1.2", {"num.io.threads": "2"}, ["-XX:G1HeapRegionSize=4m"])
    [broker] = status["brokers"]
    command = open(f"/proc/{broker['pid']}/cmdline", "rb").read().split(b"\0")
    assert b"-XX:G1HeapRegionSize=4m" in command and any(b"kafka_2.13-4.1.2.jar" in part for part in command)
    assert "num.io.threads=2" in (cluster_dir / "node-1" / "server.properties").read_text()


def test_fault_command_without_a_cluster_is_one_clear_line(cluster_dir):
    done = kafkabench(cluster_dir, "cluster", "kill", "--broker", "1")
    assert done.returncode == 1
    assert error_lines(done) == [f"error: no embedded cluster in {cluster_dir}; start one with `kafkabench cluster up`"]

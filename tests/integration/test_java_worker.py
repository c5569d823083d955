"""The Java client worker against a real broker: built once and cached, speaking core.protocol on stdio."""

from __future__ import annotations

import hashlib
import os
import queue
import subprocess
import threading
from contextlib import contextmanager
from pathlib import Path

import pytest

from kafkabench.cluster.artifacts import JarCache
from kafkabench.cluster.java import Java, find_java
from kafkabench.core import protocol
from kafkabench.core.histogram import LatencyHistogram
from kafkabench.errors import JavaNotFoundError
from kafkabench.workers import java_build
from kafkabench.workers.java_build import CLASS_FILE, JavaWorkerUnavailable, build_worker, java_worker_command

pytestmark = pytest.mark.integration

PAYLOAD_BYTES = 100 * 1024
PRODUCER_CONFIG = {"acks": "1", "linger.ms": "0", "max.request.size": "1048576"}
CONSUMER_CONFIG = {"max.partition.fetch.bytes": "1048576", "fetch.max.bytes": "52428800"}
REPLY_TIMEOUT_S = 60  # JVM start, connections and the cold message fit well inside this
EXIT_TIMEOUT_S = 20


@pytest.fixture(scope="module")
def jdk():
    try:
        java = find_java()
    except JavaNotFoundError:
        java = None
    if java is None or java.javac is None:
        pytest.skip("the Java client worker needs a JDK (javac)")
    return java


@pytest.fixture(scope="module")
def jars() -> list[Path]:
    return JarCache().ensure()


@pytest.fixture(scope="module")
def worker_command(jdk, jars, tmp_path_factory) -> list[str]:
    return java_worker_command(jdk, jars, tmp_path_factory.mktemp("worker-cache"))


class Worker:
    """A worker subprocess; every read is bounded, stderr goes to a file for failure messages."""

    def __init__(self, argv: list[str], stderr_path: Path) -> None:
        self.stderr_path = stderr_path
        with stderr_path.open("w") as stderr:
            self.process = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr,
                                            text=True)
        self._lines: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=self._read_stdout, daemon=True).start()

    def _read_stdout(self) -> None:
        for line in self.process.stdout:
            self._lines.put(line)
        self._lines.put(None)

    def send(self, message) -> None:
        self.process.stdin.write(protocol.encode(message))
        self.process.stdin.flush()

    def receive(self, timeout_s: float = REPLY_TIMEOUT_S):
        try:
            line = self._lines.get(timeout=timeout_s)
        except queue.Empty:
            pytest.fail(f"no message from the worker within {timeout_s} s; stderr: {self.stderr_tail()}")
        if line is None:
            pytest.fail(f"the worker closed stdout (exit {self.process.poll()}); stderr: {self.stderr_tail()}")
        return protocol.decode(line)

    def stderr_tail(self) -> str:
        return " | ".join(self.stderr_path.read_text().splitlines()[-5:])


@contextmanager
def running_worker(argv: list[str], tmp_path: Path):
    worker = Worker(argv, tmp_path / "worker.stderr")
    try:
        yield worker
    finally:
        if worker.process.poll() is None:
            worker.process.kill()
        worker.process.wait(timeout=EXIT_TIMEOUT_S)


def ping_pong_task(bootstrap: str, topic: str, payload: Path, sha256: str) -> protocol.Task:
    return protocol.Task(
        scenario="ping_pong", client="java", bootstrap_servers=bootstrap, topic=topic,
        producer_config=PRODUCER_CONFIG, consumer_config=CONSUMER_CONFIG,
        payload_files=[str(payload)], payload_sha256s=[sha256], warmup=2, timeout_s=30,
    )


@pytest.fixture
def payload(tmp_path) -> Path:
    path = tmp_path / "payload.bin"
    path.write_bytes(os.urandom(PAYLOAD_BYTES))
    return path


@pytest.fixture
def large_message_topic(admin, topic_name) -> str:
    admin.create_topic(topic_name, config={"max.message.bytes": str(2 * 1024 * 1024)})
    return topic_name


def test_the_worker_is_built_once_then_served_from_the_cache(jdk, jars, tmp_path):
    classes = build_worker(jdk, jars, tmp_path)
    class_file = classes / CLASS_FILE
    built_at = class_file.stat().st_mtime_ns
    assert classes.parent == tmp_path / "java-worker"
    assert not list(classes.parent.glob(".*-*")), "the temporary build directory was left behind"

    assert build_worker(jdk, jars, tmp_path) == classes
    assert class_file.stat().st_mtime_ns == built_at

    command = java_worker_command(jdk, jars, tmp_path)
    assert command[0] == str(jdk.executable) and command[-1] == "kafkabench.KafkabenchWorker"
    assert str(classes) in command[command.index("-cp") + 1]


def test_a_compile_failure_is_one_line_naming_the_full_output(jdk, jars, tmp_path, monkeypatch):
    monkeypatch.setattr(java_build, "worker_source", lambda: "package kafkabench; class KafkabenchWorker { int x = ; }")
    with pytest.raises(JavaWorkerUnavailable, match=r"compiling the java worker failed: .*error: .*; full javac output: ") as caught:
        build_worker(jdk, jars, tmp_path)
    message = str(caught.value)
    assert "\n" not in message
    assert Path(message.rsplit(": ", 1)[1]).read_text().count("error") >= 1
    builds = tmp_path / "java-worker"
    assert list(builds.rglob("*.class")) == [] and list(builds.glob(".*-*")) == []


def test_a_runtime_without_javac_is_a_clear_error(jars, tmp_path):
    runtime = tmp_path / "jre" / "bin" / "java"
    runtime.parent.mkdir(parents=True)
    runtime.write_text("")
    java = Java(runtime, "17.0.1", 17, "PATH")
    with pytest.raises(JavaWorkerUnavailable, match=f"needs a JDK \\(javac\\) .*found only a runtime at {runtime}"):
        java_worker_command(java, jars, tmp_path)


def test_ping_pong_measures_every_exchange(kafka_cluster, large_message_topic, payload, worker_command, tmp_path):
    sha256 = hashlib.sha256(payload.read_bytes()).hexdigest()
    with running_worker(worker_command, tmp_path) as worker:
        worker.send(ping_pong_task(kafka_cluster.bootstrap_servers, large_message_topic, payload, sha256))
        ready = worker.receive()
        assert isinstance(ready, protocol.Ready), ready
        assert ready.client_version == JarCache().manifest.kafka_version
        for done in (10, 20):
            worker.send(protocol.Round(count=10))
            assert worker.receive() == protocol.Progress(done=done)
        worker.send(protocol.Finish())
        result = worker.receive()
        assert isinstance(result, protocol.Result), result
        assert worker.process.wait(timeout=EXIT_TIMEOUT_S) == 0

    stats = {metric: LatencyHistogram.decode(encoded).summary() for metric, encoded in result.histograms.items()}
    assert set(stats) == {"cold", "e2e", "produce", "consume"}
    assert stats["cold"].count == 1
    assert stats["e2e"].count == stats["produce"].count == stats["consume"].count == 20
    assert stats["e2e"].p50_ms >= stats["produce"].p50_ms > 0
    assert stats["e2e"].max_ms >= stats["consume"].max_ms
    assert result.counters == {"sent": 23, "acked": 23, "received": 23, "errors": 0, "out_of_range": 0}
    assert result.resources["cpu_s"] > 0 and result.resources["max_rss_mb"] > 0
    assert 0 < result.duration_s < 60
    assert result.effective_config["producer"]["acks"] == "1"
    assert result.effective_config["producer"]["max.request.size"] == "1048576"
    assert result.effective_config["consumer"]["max.partition.fetch.bytes"] == "1048576"


def test_a_value_that_does_not_hash_as_declared_is_an_integrity_error(
        kafka_cluster, large_message_topic, payload, worker_command, tmp_path):
    wrong_sha256 = hashlib.sha256(b"not the payload").hexdigest()
    with running_worker(worker_command, tmp_path) as worker:
        worker.send(ping_pong_task(kafka_cluster.bootstrap_servers, large_message_topic, payload, wrong_sha256))
        error = worker.receive()
        assert isinstance(error, protocol.Error), error
        assert worker.process.wait(timeout=EXIT_TIMEOUT_S) == 1

    assert error.kind == "integrity"
    assert error.message.startswith(f"message 1: expected key 1, {PAYLOAD_BYTES} bytes")
    assert error.partial is not None
    assert error.partial.counters["sent"] == error.partial.counters["received"] == 1
    assert error.partial.counters["errors"] == 1


def test_a_missing_topic_is_a_timeout_and_the_client_logs_stay_off_stdout(
        kafka_cluster, topic_name, payload, worker_command, tmp_path):
    task = ping_pong_task(kafka_cluster.bootstrap_servers, topic_name, payload, "0" * 64).model_copy(
        update={"timeout_s": 2})
    with running_worker(worker_command, tmp_path) as worker:
        worker.send(task)
        error = worker.receive()  # a log line on stdout would fail to decode here
        assert worker.process.wait(timeout=EXIT_TIMEOUT_S) == 1
    assert isinstance(error, protocol.Error), error
    assert error.kind == "timeout"
    assert error.message == f"no end offset for {topic_name}-0 within 2 s; does the topic exist and is the cluster reachable?"
    assert " WARN " in worker.stderr_path.read_text()  # the client's warnings went to stderr


def test_a_message_never_acknowledged_is_a_timeout_naming_it(
        kafka_cluster, large_message_topic, payload, worker_command, tmp_path):
    # A batch with room left waits linger.ms before it is sent: far longer than the task's timeout.
    lingering = {**PRODUCER_CONFIG, "linger.ms": "100000", "batch.size": "1048576", "delivery.timeout.ms": "200000"}
    task = ping_pong_task(kafka_cluster.bootstrap_servers, large_message_topic, payload, "0" * 64)
    task = task.model_copy(update={"timeout_s": 2, "producer_config": lingering})
    with running_worker(worker_command, tmp_path) as worker:
        worker.send(task)
        error = worker.receive()
        assert worker.process.wait(timeout=EXIT_TIMEOUT_S) == 1
    assert isinstance(error, protocol.Error), error
    assert (error.kind, error.message) == ("timeout", "no ack for message 1 within 2 s")
    assert error.partial.counters == {"sent": 1, "acked": 0, "received": 0, "errors": 1, "out_of_range": 0}
    assert error.partial.effective_config["producer"]["linger.ms"] == "100000"

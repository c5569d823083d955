"""The Java client worker against a real broker: built once and cached, speaking core.protocol on stdio."""

from __future__ import annotations

import hashlib
import os
import queue
import re
import subprocess
import threading
import time
import uuid
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

from kafkabench.admin import KafkaAdmin
from kafkabench.cluster.artifacts import JarCache
from kafkabench.cluster.java import Java, find_java
from kafkabench.core import protocol
from kafkabench.core.histogram import LatencyHistogram
from kafkabench.errors import JavaNotFoundError
from kafkabench.waiting import wait_until
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

    def poll(self):
        """The next message if one has arrived, else None."""
        try:
            line = self._lines.get_nowait()
        except queue.Empty:
            return None
        if line is None:
            self._lines.put(None)  # the end stays visible to receive(), which says why
            return None
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


def test_the_cache_key_covers_every_source_and_the_kafka_version():
    sources = java_build.worker_sources()
    assert "KafkabenchWorker.java" in sources and len(sources) > 1
    key = java_build._build_key(sources, "4.1.2")
    first, *_ = sources
    edited = {**sources, first: sources[first] + "\n"}
    added = {**sources, "Extra.java": "package kafkabench; class Extra {}"}
    removed = {name: text for name, text in sources.items() if name != first}
    others = [java_build._build_key(variant, "4.1.2") for variant in (edited, added, removed)]
    assert len({key, *others, java_build._build_key(sources, "4.1.1")}) == 5
    assert java_build._build_key(dict(sources), "4.1.2") == key


def test_a_compile_failure_is_one_line_naming_the_full_output(jdk, jars, tmp_path, monkeypatch):
    broken = {"KafkabenchWorker.java": "package kafkabench; class KafkabenchWorker { int x = ; }"}
    monkeypatch.setattr(java_build, "worker_sources", lambda: broken)
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
    # 5 s: long enough for the client's first metadata warning even on a slow machine (a CI run's 2 s saw none)
    task = ping_pong_task(kafka_cluster.bootstrap_servers, topic_name, payload, "0" * 64).model_copy(
        update={"timeout_s": 5})
    with running_worker(worker_command, tmp_path) as worker:
        worker.send(task)
        error = worker.receive()  # a log line on stdout would fail to decode here
        assert worker.process.wait(timeout=EXIT_TIMEOUT_S) == 1
    assert isinstance(error, protocol.Error), error
    assert error.kind == "timeout"
    assert error.message == f"no end offset for {topic_name}-0 within 5 s; does the topic exist and is the cluster reachable?"
    assert " WARN " in worker.stderr_path.read_text()  # the client's warnings went to stderr


def test_a_message_never_acknowledged_is_a_timeout_naming_it(
        kafka_cluster, large_message_topic, payload, worker_command, tmp_path):
    # A batch with room left waits linger.ms before it is sent: far longer than the task's timeout, which leaves a
    # loaded machine time to find the topic's end offset first (2 s did not, once, beside a busy core)
    lingering = {**PRODUCER_CONFIG, "linger.ms": "100000", "batch.size": "1048576", "delivery.timeout.ms": "200000"}
    task = ping_pong_task(kafka_cluster.bootstrap_servers, large_message_topic, payload, "0" * 64)
    task = task.model_copy(update={"timeout_s": 6, "producer_config": lingering})
    with running_worker(worker_command, tmp_path) as worker:
        worker.send(task)
        error = worker.receive()
        assert worker.process.wait(timeout=EXIT_TIMEOUT_S) == 1
    assert isinstance(error, protocol.Error), error
    assert (error.kind, error.message) == ("timeout", "no ack for message 1 within 6 s")
    assert error.partial.counters == {"sent": 1, "acked": 0, "received": 0, "errors": 1, "out_of_range": 0}
    assert error.partial.effective_config["producer"]["linger.ms"] == "100000"


# --- produce / consume (throughput lab) -------------------------------------------------------------------

THROUGHPUT_PRODUCER_CONFIG = {"acks": "1"}
RUN_TIMEOUT_S = 60
IDLE_TIMEOUT_S = 30


@dataclass(frozen=True)
class Payloads:
    files: list[Path]
    sha256s: list[str]


@dataclass(frozen=True)
class Produced:
    topic: str
    payloads: Payloads
    progress: list[protocol.Progress]
    result: protocol.Result


def write_payloads(directory: Path, sizes=(1000, 2000)) -> Payloads:
    files = []
    for size in sizes:
        files.append(directory / f"payload-{size}.bin")
        files[-1].write_bytes(os.urandom(size))
    return Payloads(files, [hashlib.sha256(path.read_bytes()).hexdigest() for path in files])


def produce_task(bootstrap: str, topic: str, payloads: Payloads, producer_config=None, timeout_s: float = 10,
                 **params) -> protocol.Task:
    return protocol.Task(
        scenario="produce", client="java", bootstrap_servers=bootstrap, topic=topic,
        producer_config=producer_config or THROUGHPUT_PRODUCER_CONFIG, payload_files=[str(p) for p in payloads.files],
        payload_sha256s=payloads.sha256s, timeout_s=timeout_s,
        params={"count": None, "duration_s": None, "rate_per_s": -1, "interval_s": 0.2, "stamp": True, **params},
    )


def consume_task(bootstrap: str, topic: str, sha256s: list[str], **params) -> protocol.Task:
    return protocol.Task(
        scenario="consume", client="java", bootstrap_servers=bootstrap, topic=topic, payload_sha256s=sha256s,
        timeout_s=30,
        params={"group": f"group-{uuid.uuid4().hex[:12]}", "from": "earliest", "count": None, "duration_s": None,
                "interval_s": 0.2, "check": True, "idle_timeout_s": IDLE_TIMEOUT_S, **params},
    )


def start(worker: Worker, task: protocol.Task) -> None:
    worker.send(task)
    ready = worker.receive()
    assert isinstance(ready, protocol.Ready), ready
    worker.send(protocol.Start())


def until_done(worker: Worker, timeout_s: float = RUN_TIMEOUT_S) -> tuple[list[protocol.Progress], protocol.BaseModel]:
    """The progress messages, then the result or error that ended them."""
    deadline = time.monotonic() + timeout_s
    progress = []
    while isinstance(message := worker.receive(max(0.1, deadline - time.monotonic())), protocol.Progress):
        progress.append(message)
    return progress, message


def count(encoded: str) -> int:
    return LatencyHistogram.decode(encoded).count


@pytest.fixture(scope="module")
def produced(kafka_cluster, worker_command, tmp_path_factory) -> Produced:
    """5000 records of two payloads on a 2-partition topic, sent by the Java worker as fast as it can."""
    directory = tmp_path_factory.mktemp("produced")
    topic = f"test-{uuid.uuid4().hex[:12]}"
    with KafkaAdmin(kafka_cluster.bootstrap_servers) as admin:
        admin.create_topic(topic, partitions=2)
    payloads = write_payloads(directory)
    with running_worker(worker_command, directory) as worker:
        start(worker, produce_task(kafka_cluster.bootstrap_servers, topic, payloads, count=5000))
        progress, result = until_done(worker)
        assert isinstance(result, protocol.Result), result
        assert worker.process.wait(timeout=EXIT_TIMEOUT_S) == 0
    return Produced(topic, payloads, progress, result)


def test_produce_sends_its_count_and_reports_windows(produced):
    result = produced.result
    counters = result.counters
    assert counters["sent"] == counters["acked"] == 5000
    assert counters["errors"] == counters["out_of_range"] == 0
    assert counters["payload_bytes"] == 2500 * 1000 + 2500 * 2000
    assert counters["wire_bytes"] > counters["payload_bytes"]
    assert count(result.histograms["publish_latency"]) == 5000
    assert count(result.histograms["publish_delay"]) == 0  # rate -1: no schedule to be late for
    assert result.start_ns < result.end_ns and result.duration_s == pytest.approx((result.end_ns - result.start_ns) / 1e9)
    assert result.resources["cpu_s"] > 0 and result.resources["max_rss_mb"] > 0
    assert result.effective_config["producer"]["acks"] == "1"

    windows = [p.window for p in produced.progress]
    assert windows and all(w is not None for w in windows)
    assert [w.index for w in windows] == list(range(len(windows)))
    assert all(a.end_ns == b.start_ns for a, b in zip(windows, windows[1:]))
    assert sum(w.records for w in windows) == 5000 and produced.progress[-1].done == 5000
    assert sum(w.payload_bytes for w in windows) == counters["payload_bytes"]
    assert sum(count(w.histograms["publish_latency"]) for w in windows) == 5000


def test_consume_from_earliest_checks_every_record(kafka_cluster, produced, worker_command, tmp_path):
    task = consume_task(kafka_cluster.bootstrap_servers, produced.topic, produced.payloads.sha256s, count=5000)
    with running_worker(worker_command, tmp_path) as worker:
        start(worker, task)
        progress, result = until_done(worker)
        assert isinstance(result, protocol.Result), result
        assert worker.process.wait(timeout=EXIT_TIMEOUT_S) == 0

    assert result.counters == {"received": 5000, "payload_bytes": 2500 * 1000 + 2500 * 2000, "unstamped": 0,
                               "errors": 0, "out_of_range": 0}
    assert count(result.histograms["e2e"]) == 5000
    assert set(result.timings) == {"rebalance_s", "first_record_s"}
    assert 0 < result.timings["rebalance_s"] < 30 and 0 < result.timings["first_record_s"] < 30
    assert result.start_ns <= result.end_ns
    assert result.effective_config["consumer"]["group.id"] == task.params["group"]
    assert result.effective_config["consumer"]["auto.offset.reset"] == "earliest"
    assert sum(p.window.records for p in progress) == 5000


def test_a_record_matching_no_declared_payload_is_an_integrity_error(kafka_cluster, produced, worker_command, tmp_path):
    other = [hashlib.sha256(b"something else").hexdigest()]
    with running_worker(worker_command, tmp_path) as worker:
        start(worker, consume_task(kafka_cluster.bootstrap_servers, produced.topic, other, count=5000))
        _, error = until_done(worker)
        assert worker.process.wait(timeout=EXIT_TIMEOUT_S) == 1
    assert isinstance(error, protocol.Error), error
    assert error.kind == "integrity"
    assert re.fullmatch(rf"record at {produced.topic}-[01]@0 matches none of the 1 payloads", error.message)
    assert error.partial.counters["received"] >= 1


def test_an_open_loop_producer_keeps_to_its_rate_and_measures_its_delay(
        kafka_cluster, admin, topic_name, worker_command, tmp_path):
    admin.create_topic(topic_name)
    payloads = write_payloads(tmp_path, sizes=(100,))
    with running_worker(worker_command, tmp_path) as worker:
        start(worker, produce_task(kafka_cluster.bootstrap_servers, topic_name, payloads, rate_per_s=2000, count=1000))
        _, result = until_done(worker)
        assert isinstance(result, protocol.Result), result
    # Message 999 is due 0.4995 s after the start signal, where the run's time starts, and nothing is sent before it
    # is due: the schedule, not the broker, sets the pace. (Timed from the first send, a loaded machine that held
    # the first one back made the run shorter than its schedule: 0.39 s in a CI run.)
    assert result.duration_s >= 0.4995
    assert result.counters["acked"] == 1000
    assert count(result.histograms["publish_delay"]) == 1000


def test_a_finish_stops_a_producer_early_with_every_record_accounted_for(
        kafka_cluster, admin, topic_name, worker_command, tmp_path):
    admin.create_topic(topic_name)
    payloads = write_payloads(tmp_path, sizes=(100,))
    with running_worker(worker_command, tmp_path) as worker:
        start(worker, produce_task(kafka_cluster.bootstrap_servers, topic_name, payloads, rate_per_s=1000, duration_s=60))
        assert isinstance(worker.receive(), protocol.Progress)
        worker.send(protocol.Finish())
        _, result = until_done(worker, timeout_s=30)  # half the 60 s run: a producer deaf to Finish is still sending
        assert isinstance(result, protocol.Result), result
    assert 0 < result.counters["acked"] == result.counters["sent"] < 60_000


def test_consumers_from_latest_receive_exactly_what_a_producer_started_after_them_acked(
        kafka_cluster, admin, topic_name, worker_command, tmp_path):
    # Two members of one group: the first keeps polling while it waits for `start`, or the second's join
    # could not complete and it would never be ready.
    admin.create_topic(topic_name, partitions=2)
    payloads = write_payloads(tmp_path)
    group = f"group-{uuid.uuid4().hex[:12]}"
    consumer_task = consume_task(kafka_cluster.bootstrap_servers, topic_name, payloads.sha256s, group=group,
                                 **{"from": "latest"})
    producer_task = produce_task(kafka_cluster.bootstrap_servers, topic_name, payloads, count=3000, rate_per_s=20_000)
    for name in ("consumer-1", "consumer-2", "producer"):
        (tmp_path / name).mkdir()
    with running_worker(worker_command, tmp_path / "consumer-1") as first, \
            running_worker(worker_command, tmp_path / "consumer-2") as second, \
            running_worker(worker_command, tmp_path / "producer") as producer:
        consumers = (first, second)
        for consumer in consumers:
            consumer.send(consumer_task)
        for consumer in consumers:
            assert isinstance(consumer.receive(), protocol.Ready)  # positioned at the end: nothing produced yet
        producer.send(producer_task)
        assert isinstance(producer.receive(), protocol.Ready)
        for worker in (*consumers, producer):
            worker.send(protocol.Start())
        _, produced = until_done(producer)
        assert isinstance(produced, protocol.Result), produced
        acked = produced.counters["acked"]

        done = {consumer: 0 for consumer in consumers}

        def all_received() -> bool:
            for consumer in consumers:
                while (progress := consumer.poll()) is not None:
                    assert isinstance(progress, protocol.Progress), progress
                    done[consumer] = progress.done
            return sum(done.values()) >= acked

        wait_until(all_received, timeout_s=60, what=f"the consumers to report the {acked} acknowledged records",
                   interval_s=0.05)
        results = []
        for consumer in consumers:
            finish_sent = time.monotonic()
            consumer.send(protocol.Finish())
            # told by Finish: left alone, a consumer stops only after its 30 s idle timeout; leaving the group and
            # sending the result take a loaded machine a few seconds at most
            _, consumed = until_done(consumer, timeout_s=IDLE_TIMEOUT_S / 2)
            assert time.monotonic() - finish_sent < IDLE_TIMEOUT_S / 2
            assert isinstance(consumed, protocol.Result), consumed
            assert consumer.process.wait(timeout=EXIT_TIMEOUT_S) == 0
            results.append(consumed)

    assert acked == 3000
    assert sum(r.counters["received"] for r in results) == acked
    assert all(r.counters["received"] > 0 and r.counters["unstamped"] == 0 for r in results)
    assert sum(count(r.histograms["e2e"]) for r in results) == acked
    assert sum(r.counters["payload_bytes"] for r in results) == produced.counters["payload_bytes"]


def test_a_consumer_stops_by_itself_once_nothing_arrives(kafka_cluster, produced, worker_command, tmp_path):
    # 3 s: no gap between fetches of a full topic comes near it on a loaded machine (1 s could, and stopped the
    # consumer before the end), yet the stop comes long before the 30 s task timeout
    task = consume_task(kafka_cluster.bootstrap_servers, produced.topic, produced.payloads.sha256s, idle_timeout_s=3)
    with running_worker(worker_command, tmp_path) as worker:
        start(worker, task)
        _, result = until_done(worker)
        assert isinstance(result, protocol.Result), result
    assert result.counters["received"] == 5000
    assert result.timings["idle_stop_s"] == 3


def test_a_topic_deleted_under_a_producer_ends_it_with_the_failures_counted(
        kafka_cluster, admin, topic_name, worker_command, tmp_path):
    admin.create_topic(topic_name)
    payloads = write_payloads(tmp_path, sizes=(100,))
    # max.block.ms 10 s: it bounds the worker's first metadata too, which a loaded CI machine once took over 3 s for
    short = {"acks": "1", "delivery.timeout.ms": "3000", "request.timeout.ms": "2000", "max.block.ms": "10000"}
    task = produce_task(kafka_cluster.bootstrap_servers, topic_name, payloads, producer_config=short, timeout_s=3,
                        rate_per_s=500, duration_s=60)
    with running_worker(worker_command, tmp_path) as worker:
        start(worker, task)
        while not worker.receive().window.records:  # acks are flowing
            pass
        admin.delete_topic(topic_name)
        deleted = time.monotonic()
        # ended by its failures (3 s of sends failing after their 3 s delivery timeout), not by the 60 s duration: half
        # of that leaves a loaded machine room and still tells the two apart
        _, error = until_done(worker, timeout_s=30)
        assert time.monotonic() - deleted < 30
        assert worker.process.wait(timeout=EXIT_TIMEOUT_S) == 1

    assert isinstance(error, protocol.Error), error
    assert error.kind == "failure"
    assert re.fullmatch(r"\d+ sends failed \(\w+: .*\) and none succeeded for 3 s", error.message), error.message
    counters = error.partial.counters
    assert counters["errors"] > 0 and counters["acked"] > 0
    assert sum(n for name, n in counters.items() if name.startswith("errors.")) == counters["errors"]

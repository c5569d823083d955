"""The pytest plugin as an application's suite uses it: pytest run in a process of its own (`pytester`) on sample
tests, against real embedded clusters the plugin starts: the docs' example through a leader kill, a pause and a
clean restart, a secured cluster, xdist workers, an interrupted session, a partitioned leader, and bad input."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import warnings
from pathlib import Path

import psutil
import pytest

from kafkabench.cluster.artifacts import DEFAULT_KAFKA_VERSION
from kafkabench.cluster.network.bridge import RECORDS, root_rule_comment
from tests.conftest import wait_for
from tests.debian import install

pytestmark = pytest.mark.integration

DOCS = Path(__file__).parents[2] / "docs" / "testing.md"
TITLED = re.compile(r'```python title="(?P<name>[^"]+)"\n(?P<code>.*?)```', re.S)
RUN_TIMEOUT_S = 300
STUCK_SERVICE = "the service is stuck in send_offsets_to_transaction"


def docs_files() -> dict[str, str]:
    """The code blocks of docs/testing.md that carry a file name, as written there."""
    return {m["name"]: m["code"] for m in TITLED.finditer(DOCS.read_text())}


def run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest_subprocess("-p", "kafkabench", "-p", "no:cacheprovider", *args, timeout=RUN_TIMEOUT_S)


def wait_gone(pids: list[int], what: str, within_s: float = 30) -> None:
    def running(pid: int) -> bool:
        try:
            return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
        except psutil.NoSuchProcess:
            return False

    wait_for(lambda: not any(running(pid) for pid in pids), within_s, what)


FAULTS = '''
import pytest
from confluent_kafka import Producer

from kafkabench.testing import check_delivery
from kafkabench.waiting import wait_until

pytestmark = pytest.mark.kafka(brokers=3, partitions=3, topic_config={"min.insync.replicas": "2"})


def produce(config, topic, ids):
    producer = Producer({**config, "enable.idempotence": True, "linger.ms": 5})
    for one in ids:
        producer.produce(topic, key=one.encode(), value=one.encode())
        producer.poll(0)
    assert producer.flush(60) == 0


def test_a_paused_leader_is_resumed_and_nothing_is_lost(kafka_cluster, kafka_topic):
    ids = [f"p-{n}" for n in range(600)]
    with kafka_cluster.pause_broker(kafka_cluster.leader_of(kafka_topic, 1)) as paused:
        assert paused in kafka_cluster.brokers
        produce(kafka_cluster.client_config(), kafka_topic, ids)  # partition 1's wait for its leader to move
        states = {b.id: b.state for b in kafka_cluster.embedded.status().brokers}
        assert states[paused] == "paused"
    assert {b.state for b in kafka_cluster.embedded.status().brokers} == {"running"}
    check_delivery(kafka_cluster, kafka_topic, ids, ordered=False).assert_exactly_once()


def test_a_clean_restart_hands_leadership_over_and_brings_the_broker_back(kafka_cluster, kafka_topic):
    leader = kafka_cluster.leader_of(kafka_topic, 0)
    with kafka_cluster.restart_broker(leader):
        assert {b.id: b.state for b in kafka_cluster.embedded.status().brokers}[leader] == "dead"
        # the brokers' metadata learns the new leader a moment after the controller
        wait_until(lambda: kafka_cluster.leader_of(kafka_topic, 0) != leader, timeout_s=15, what="a new leader")
        produce(kafka_cluster.client_config(), kafka_topic, ["r-1", "r-2"])
    assert {b.state for b in kafka_cluster.embedded.status().brokers} == {"running"}


def test_the_marker_makes_the_topic(kafka_admin, kafka_topic, kafka_bootstrap):
    answer = kafka_admin.list_topics(kafka_topic, timeout=10)
    metadata = answer.topics[kafka_topic]
    assert len(metadata.partitions) == 3 and all(len(p.replicas) == 3 for p in metadata.partitions.values()), \
        f"broker {answer.orig_broker_id} answered {metadata.error}"
    assert kafka_bootstrap.count(",") == 2


def test_a_fault_left_behind_is_mended_before_the_next_test(kafka_cluster):
    kafka_cluster.embedded.kill_broker(kafka_cluster.brokers[-1])


def test_the_next_test_gets_the_whole_cluster(kafka_cluster):
    assert {b.state for b in kafka_cluster.embedded.status().brokers} == {"running"}


def test_a_lossy_application_is_named_with_examples(kafka_cluster, kafka_topic):
    produce(kafka_cluster.client_config(), kafka_topic, ["a", "b", "b-copy"])
    check_delivery(kafka_cluster, kafka_topic, ["a", "b", "c"], wait_s=1).assert_exactly_once()


def test_a_network_fault_on_a_loopback_cluster_is_one_line(kafka_cluster):
    with kafka_cluster.delay(kafka_cluster.brokers[0], 50):
        pass
'''


def test_the_docs_example_and_the_faults_heal_on_a_three_broker_cluster(pytester):
    pytester.makepyfile(**{name.removesuffix(".py"): code for name, code in docs_files().items()},
                        test_faults=FAULTS)
    result = run(pytester, "--durations=0")
    # The docs' service may meet librdkafka's stall in send_offsets_to_transaction (docs/testing.md, `stuck()`): the
    # client's fault, which the service names; any other failure of the example is one.
    stalled = STUCK_SERVICE in result.stdout.str()
    result.assert_outcomes(passed=5 if stalled else 6, failed=3 if stalled else 2)
    result.stdout.fnmatch_lines([
        # lost c, and 'b-copy' a stray: the message says both with examples
        "E *AssertionError: not exactly once: topic test_a_lossy_application_is_named_with_examples-*: 3 ids "
        "produced, 3 read: 1 lost (e.g. 'c'); *; 1 strays (ids never produced) (e.g. 'b-copy')",
        "E *kafkabench.testing.cluster.FaultFailed: cannot delay broker 1: network faults need a cluster on a network "
        "of its own, @pytest.mark.kafka(network=\"isolated\") (as root)",
    ])
    if stalled:
        result.stdout.fnmatch_lines([f"E *TimeoutError: {STUCK_SERVICE} for * s, past its 30 s timeout"])
        warnings.warn(f"the docs' example met librdkafka's stall: {STUCK_SERVICE}")


SECURED = '''
import time

import pytest
from confluent_kafka import Consumer, Producer
from kafka import KafkaConsumer

from kafkabench.testing import check_delivery


@pytest.mark.kafka(security="sasl_ssl")
def test_a_secured_cluster_hands_the_test_its_client_settings(kafka_cluster, kafka_topic):
    config = kafka_cluster.client_config()
    assert config["security.protocol"] == "SASL_SSL" and config["sasl.mechanisms"] == "SCRAM-SHA-512"
    assert config["sasl.username"] and config["sasl.password"] and config["ssl.ca.location"]
    producer = Producer(config)
    for n in range(20):
        producer.produce(kafka_topic, str(n).encode())
    assert producer.flush(30) == 0
    check_delivery(kafka_cluster, kafka_topic, [str(n) for n in range(20)]).assert_exactly_once()
    consumer = KafkaConsumer(kafka_topic, auto_offset_reset="earliest", **kafka_cluster.client_config("kafka-python"))
    values, deadline = [], time.monotonic() + 60
    while len(values) < 20 and time.monotonic() < deadline:
        values += [int(r.value) for records in consumer.poll(timeout_ms=500).values() for r in records]
    consumer.close()
    assert sorted(values) == list(range(20))
    assert "SASL_SSL" in kafka_cluster.client_properties.read_text()


def test_a_plaintext_cluster_has_no_secrets(kafka_cluster):
    assert kafka_cluster.client_config("java") == {"bootstrap.servers": kafka_cluster.bootstrap_servers}
    assert kafka_cluster.client_properties is None
'''


def test_a_secured_cluster_from_a_marker(pytester):
    pytester.makepyfile(test_secured=SECURED)
    run(pytester).assert_outcomes(passed=2)


WORKER = '''
import json, os

def test_{n}(kafka_cluster, kafka_topic):
    nodes = kafka_cluster.embedded.status().brokers + kafka_cluster.embedded.status().controllers
    with open("worker-{n}.json", "w") as out:
        json.dump({{"worker": os.environ["PYTEST_XDIST_WORKER"], "bootstrap": kafka_cluster.bootstrap_servers,
                   "pids": [node.pid for node in nodes]}}, out)
'''


def test_each_xdist_worker_has_a_cluster_of_its_own_and_stops_it(pytester):
    pytester.makepyfile(**{f"test_worker_{n}": WORKER.format(n=n) for n in (1, 2)})
    run(pytester, "-n", "2", "--dist", "loadfile").assert_outcomes(passed=2)
    seen = [json.loads((pytester.path / f"worker-{n}.json").read_text()) for n in (1, 2)]
    assert {s["worker"] for s in seen} == {"gw0", "gw1"}
    ports = [set(re.findall(r":(\d+)", s["bootstrap"])) for s in seen]
    assert not ports[0] & ports[1]
    wait_gone([pid for s in seen for pid in s["pids"]], "both workers' brokers to be gone")


INTERRUPTED = '''
import json, os
from kafkabench.waiting import wait_until

def test_waits(kafka_cluster):
    nodes = kafka_cluster.embedded.status().brokers + kafka_cluster.embedded.status().controllers
    with open("pids.json", "w") as out:
        json.dump([node.pid for node in nodes], out)
    # the session is interrupted while it waits here for a file nobody writes (and fails at the bound if not)
    wait_until(lambda: os.path.exists("never"), timeout_s=120, what="the session to be interrupted")
'''


@pytest.mark.parametrize("how", [signal.SIGINT, signal.SIGKILL], ids=["ctrl-c", "kill-9"])
def test_an_interrupted_session_leaves_no_broker_behind(pytester, how):
    pytester.makepyfile(test_interrupted=INTERRUPTED)
    log = pytester.path / "session.log"
    with log.open("w") as out:  # a file, not a pipe: a session blocked writing to a full pipe would never end
        # Ctrl-C as a terminal delivers it: a suite started in the background (`make test &`, as CI may start it)
        # ignores SIGINT, and a child inherits that and would never be interrupted
        session = subprocess.Popen([sys.executable, "-m", "pytest", "-p", "kafkabench", "-p", "no:cacheprovider", "-q"],
                                   cwd=pytester.path, stdout=out, stderr=subprocess.STDOUT,
                                   preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        wait_for(lambda: (pytester.path / "pids.json").exists() or session.poll() is not None, 120,
                 "the session's test to write its brokers' pids")
        pids = json.loads((pytester.path / "pids.json").read_text())
        assert pids and all(psutil.pid_exists(pid) for pid in pids)
        session.send_signal(how)
        session.wait(120)
    finally:
        if session.poll() is None:
            session.kill()
    wait_gone(pids, f"the interrupted session's brokers to be gone; its output: {log.read_text()}")
    if how == signal.SIGINT:
        assert "KeyboardInterrupt" in log.read_text()


def test_the_plugin_is_off_unless_asked_and_a_conftest_line_turns_it_on(pytester):
    pytester.makepyfile(test_asks="def test_asks(kafka_clusters):\n    assert kafka_clusters is not None\n")
    off = pytester.runpytest_subprocess("-p", "no:cacheprovider", timeout=RUN_TIMEOUT_S)
    off.assert_outcomes(errors=1)
    off.stdout.fnmatch_lines(["*fixture 'kafka_clusters' not found*"])
    pytester.makeconftest('pytest_plugins = ["kafkabench.testing.plugin"]\n')
    pytester.runpytest_subprocess("-p", "no:cacheprovider", timeout=RUN_TIMEOUT_S).assert_outcomes(passed=1)
    run(pytester).assert_outcomes(passed=1)  # asked both ways: loaded once


BAD_INPUT = '''
import os
import pytest


def test_without_a_jdk(kafka_cluster):
    pass


@pytest.mark.kafka(brokerz=3)
def test_an_unknown_setting(kafka_topic):
    pass


@pytest.mark.kafka(brokers=0)
def test_a_bad_value(kafka_cluster):
    pass


@pytest.mark.kafka(network="isolated")
def test_network_faults_without_root(kafka_cluster):
    pass


@pytest.mark.kafka(broker_config={"num.io.threadz": "4"})
def test_an_unknown_broker_setting(kafka_cluster):
    pass
'''


def test_bad_input_fails_each_test_at_setup_in_one_line(pytester):
    pytester.makepyfile(test_bad=BAD_INPUT)
    # not root, as far as the plugin can tell; and no Java anywhere it looks
    pytester.makeconftest("import os\nos.geteuid = lambda: 1000\n")
    env = {key: value for key, value in os.environ.items() if key != "JAVA_HOME"}
    env["PATH"] = str(pytester.path / "no-java-here")
    done = subprocess.run([sys.executable, "-m", "pytest", "-p", "kafkabench", "-p", "no:cacheprovider", "-q", "-rE"],
                          cwd=pytester.path, capture_output=True, text=True, env=env, timeout=RUN_TIMEOUT_S)
    errors = [line for line in done.stdout.splitlines() if line.startswith("ERROR ")]
    assert len(errors) == 5, done.stdout
    lines = done.stdout.splitlines()
    assert "Traceback" not in done.stdout and "During handling" not in done.stdout
    for expected in ["the Kafka cluster (1 broker(s)) did not start: no usable Java runtime (",
                     "@pytest.mark.kafka: unknown setting 'brokerz'; known: brokers, controllers,",
                     "@pytest.mark.kafka(brokers=0): must be a whole number of at least 1",
                     '@pytest.mark.kafka(network="isolated"): network faults need root',
                     "the Kafka cluster (1 broker(s)) did not start: @pytest.mark.kafka: broker setting "
                     "num.io.threadz: "
                     f"Kafka {DEFAULT_KAFKA_VERSION} has no such setting"]:
        assert any(line.startswith(expected) for line in lines), (expected, done.stdout)
    assert any("install a JDK 17+" in line for line in lines)


PARTITIONED = '''
import time
import pytest
from confluent_kafka import Producer
from kafkabench.testing import check_delivery


@pytest.mark.kafka(brokers=3, network="isolated", topic_config={"min.insync.replicas": "2"})
def test_writes_go_on_through_a_partitioned_leader(kafka_cluster, kafka_topic):
    producer = Producer({**kafka_cluster.client_config(), "enable.idempotence": True, "acks": "all"})
    ids = [str(n) for n in range(300)]
    # healed after 20 s, or when the block ends: the partition's leader may be the quorum's (3 combined nodes), and a
    # new quorum leader, elected once the cut one's fetches time out, fences it after a broker's session (3 s): a
    # loaded CI machine's leader had not moved after 8 s
    with kafka_cluster.partition_leader(kafka_topic, 0, seconds=20) as cut:
        for one in ids:
            producer.produce(kafka_topic, one.encode())
            producer.poll(0.03)
        assert producer.flush(60) == 0
        assert kafka_cluster.leader_of(kafka_topic, 0) != cut
    check_delivery(kafka_cluster, kafka_topic, ids).assert_exactly_once()


def timed_write(producer, topic, value):
    began = time.monotonic()
    producer.produce(topic, value)
    assert producer.flush(60) == 0
    return time.monotonic() - began


@pytest.mark.kafka(brokers=3, network="isolated", topic_config={"min.insync.replicas": "2"})
def test_a_delayed_and_a_limited_leader_slow_its_writes_down(kafka_cluster, kafka_topic):
    producer = Producer({**kafka_cluster.client_config(), "acks": "1", "linger.ms": 0})
    timed_write(producer, kafka_topic, b"warm")  # connections made before timing
    leader = kafka_cluster.leader_of(kafka_topic, 0)
    with kafka_cluster.delay(leader, 150):
        assert timed_write(producer, kafka_topic, b"delayed") >= 0.3  # the round trip: 2 x 150 ms more
    with kafka_cluster.limit(leader, 4):  # 2 MB at 4 Mbit/s: 4 s
        began = time.monotonic()
        for _ in range(20):
            producer.produce(kafka_topic, bytes(100_000))
        assert producer.flush(60) == 0 and time.monotonic() - began >= 2
'''


@pytest.fixture
def network_tools():
    if os.geteuid() != 0:
        pytest.skip("network namespaces need root")
    for package, binary in (("nftables", "/usr/sbin/nft"), ("iptables", "/usr/sbin/iptables"),
                            ("libnetfilter-queue1", "/usr/lib/x86_64-linux-gnu/libnetfilter_queue.so.1")):
        if reason := install(package, Path(binary)):
            pytest.skip(reason)


def test_network_faults_on_an_isolated_network(pytester, network_tools):
    pytester.makepyfile(test_partitioned=PARTITIONED)
    run(pytester).assert_outcomes(passed=2)


KILLED_MID_FAULT = '''
import json
import os

from kafkabench.waiting import wait_until

import pytest


@pytest.mark.kafka(network="isolated")
def test_faulted(kafka_cluster, kafka_topic):
    nodes = kafka_cluster.embedded.status().brokers + kafka_cluster.embedded.status().controllers
    with kafka_cluster.delay(kafka_cluster.brokers[0], 50), kafka_cluster.partition_leader(kafka_topic, 0):
        with open("faulted.json", "w") as out:
            json.dump({"network": kafka_cluster.embedded.network.name, "pids": [node.pid for node in nodes]}, out)
        # the session is killed while it waits here for a file nobody writes (and fails at the bound if not)
        wait_until(lambda: os.path.exists("never"), timeout_s=120, what="the session to be killed")
'''


def test_a_session_killed_mid_fault_leaves_nothing_that_cluster_down_does_not_remove(pytester, network_tools):
    pytester.makepyfile(test_killed=KILLED_MID_FAULT)
    log = pytester.path / "session.log"
    with log.open("w") as out:  # a file, not a pipe: a session blocked writing to a full pipe would never end
        session = subprocess.Popen([sys.executable, "-m", "pytest", "-p", "kafkabench", "-p", "no:cacheprovider", "-q"],
                                   cwd=pytester.path, stdout=out, stderr=subprocess.STDOUT)
    try:
        faulted = pytester.path / "faulted.json"
        wait_for(lambda: faulted.exists() or session.poll() is not None, 180, "the session's faults to be in place")
        assert faulted.exists(), f"the session ended before its faults were in place; its output: {log.read_text()}"
        found = json.loads(faulted.read_text())
        record = json.loads((RECORDS / f"{found['network']}.json").read_text())
        assert record["helpers"]  # the delay's helper, recorded with the network
    finally:
        session.kill()
        session.wait(30)
    wait_gone(found["pids"], "the killed session's brokers to die with it")
    env = {**os.environ, "KAFKABENCH_CLUSTER_DIR": str(pytester.path / "no-cluster-here")}
    down = subprocess.run([sys.executable, "-m", "kafkabench", "cluster", "down"], env=env, capture_output=True,
                          text=True, timeout=120)
    assert down.returncode == 0 and f"removed the isolated network {found['network']}" in down.stderr, down.stderr
    name = found["network"]
    assert name not in subprocess.run(["ip", "link"], capture_output=True, text=True).stdout
    assert name not in subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    assert root_rule_comment(name) not in subprocess.run(["iptables", "-S", "INPUT"], capture_output=True,
                                                         text=True).stdout
    assert not (RECORDS / f"{name}.json").exists()
    wait_gone([pid for pid, _ in record["helpers"]], "the delay's helper to be stopped")

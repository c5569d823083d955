"""`kafkabench monitor` on a real broker: a real Prometheus server scrapes it and finds probe series for the broker,
promtool accepts the written configuration and rules, a group that stopped consuming while a producer goes on
shows growing lag, lag in seconds and a status other than OK, and one poll of the lag part gives each of several groups
its own lag and members."""

import json
import socket
import subprocess
import sys
import threading
import urllib.parse
import urllib.request

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition

from kafkabench.admin import quiet_client_config
from kafkabench.cluster.target import Target
from kafkabench.labs.monitor.lag_collector import MONITOR_GROUPS, LagCollector
from kafkabench.labs.monitor.metrics import Recorder
from kafkabench.waiting import wait_until

from tests.integration.monitoring import monitor_in_background
from tests.debian import PROMETHEUS, PROMTOOL

pytestmark = pytest.mark.integration

# how long the monitor watches: Prometheus must start scraping it while it does, and on a loaded machine the first
# probe read back (the probe topic created, its leader found) can take several seconds
WATCH_S = 20


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_promtool_accepts_the_written_configuration_and_rules(prometheus_installed, tmp_path):
    written = subprocess.run([sys.executable, "-m", "kafkabench", "monitor", "--write-config", str(tmp_path)],
                             capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert written.returncode == 0, written.stderr
    for check in (["check", "config", str(tmp_path / "prometheus.yml")], ["check", "rules", str(tmp_path / "alerts.yml")]):
        done = subprocess.run([str(PROMTOOL), *check], capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stdout + done.stderr


def answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2) as answer:
            return answer.status == 200
    except OSError:
        return False  # still starting


def test_a_real_prometheus_scrapes_probe_series_for_every_broker(prometheus_installed, kafka_cluster, admin, tmp_path):
    metrics_port, web_port = free_port(), free_port()
    topic = f"kafkabench-probe-{tmp_path.name[-8:]}"
    config = tmp_path / "prometheus.yml"
    config.write_text(json.dumps({"global": {"scrape_interval": "1s"}, "scrape_configs": [
        {"job_name": "kafkabench", "static_configs": [{"targets": [f"127.0.0.1:{metrics_port}"]}]}]}))
    server = subprocess.Popen([str(PROMETHEUS), f"--config.file={config}", f"--storage.tsdb.path={tmp_path / 'tsdb'}",
                               f"--web.listen-address=127.0.0.1:{web_port}"], stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
    thread = None
    try:
        # Prometheus ready first: its start-up on a loaded machine is not taken out of the monitor's watch
        wait_until(lambda: answers(f"http://127.0.0.1:{web_port}/-/ready"), timeout_s=60, what="Prometheus to be ready",
                   interval_s=0.2)
        thread, windows, done = monitor_in_background(Target.external(kafka_cluster.bootstrap_servers),
                                                      tmp_path / "result", probe_topic=topic, interval=0.5,
                                                      duration=WATCH_S, metrics_port=metrics_port)
        brokers = {str(broker) for broker in admin.brokers()}
        query = "sum by (broker_id) (kafkabench_end_to_end_messages_received_total)"
        url = f"http://127.0.0.1:{web_port}/api/v1/query?" + urllib.parse.urlencode({"query": query})

        def every_broker_counted() -> list | None:
            if not thread.is_alive():  # its endpoint is gone: the series went stale and will not come
                raise AssertionError(f"the monitor ended before Prometheus had a probe series for each of {brokers}")
            try:
                with urllib.request.urlopen(url, timeout=2) as answer:
                    series = json.load(answer)["data"]["result"]
            except OSError:
                return None
            counted = {s["metric"]["broker_id"] for s in series if float(s["value"][1]) > 0}
            return series if counted == brokers else None

        # a series is there only while the monitor serves it: the wait ends before the watch does
        series = wait_until(every_broker_counted, timeout_s=WATCH_S - 2, what=f"a probe series for each of {brokers}",
                            interval_s=0.5)
        assert {s["metric"]["broker_id"] for s in series} == brokers, series
    finally:
        server.terminate()
        server.wait(10)
        if thread is not None:
            thread.join(WATCH_S + 30)
    assert not thread.is_alive() and done["document"].runs[0].counters["lost"] == 0
    assert windows.lines and all(w["brokers"] for w in windows.lines)


def fifty_records(admin, bootstrap: str, topic: str) -> Producer:
    """A topic of one partition holding 50 acknowledged records; the producer that wrote them, to go on with."""
    admin.create_topic(topic, partitions=1)
    producer = Producer(quiet_client_config(bootstrap))
    for i in range(50):
        producer.produce(topic, f"v{i}".encode())
    assert producer.flush(30) == 0, "the 50 records were not all acknowledged"
    return producer


def test_a_group_that_stopped_consuming_shows_growing_lag_and_lag_seconds_and_is_not_ok(kafka_cluster, admin,
                                                                                       topic_name, tmp_path):
    bootstrap = kafka_cluster.bootstrap_servers
    producer = fifty_records(admin, bootstrap, topic_name)
    group = f"stopped-{topic_name}"
    consumer = Consumer(quiet_client_config(bootstrap, **{"group.id": group, "auto.offset.reset": "earliest",
                                                           "enable.auto.commit": False}))
    consumer.subscribe([topic_name])
    read = []

    def twenty_read() -> bool:
        message = consumer.poll(0.5)
        if message is not None and message.error() is None:
            read.append(message)
        return len(read) >= 20

    wait_until(twenty_read, timeout_s=60, what="the group to read 20 of the 50 records", interval_s=0)
    consumer.commit(asynchronous=False)
    consumer.close()  # the group stops: nobody consumes, and a producer goes on

    stop = threading.Event()

    def go_on() -> None:
        while not stop.wait(0.1):
            producer.produce(topic_name, b"more")
            producer.poll(0)

    feeder = threading.Thread(target=go_on, daemon=True)
    feeder.start()
    # 10 s: about 9 lag polls, once a second; a loaded machine's slow first poll still leaves the 5 windows and the
    # growth this needs (5 s left it only a few)
    thread, windows, _ = monitor_in_background(Target.external(bootstrap), tmp_path / "result", probe_topic=f"probe-{topic_name}",
                                               interval=0.5, duration=10, metrics_port=0, groups=[f"^{group}$"])
    thread.join(60)
    stop.set()
    feeder.join(5)
    assert not thread.is_alive(), "the monitor did not end within 60 s of its 10 s watch"
    seen = [w["groups"][group] for w in windows.lines if group in w["groups"]]
    # only the group the pattern names, in every window whose lag poll had answered (CI: a window before the first
    # answer, under load, had none)
    assert len(seen) >= 5 and all(set(w["groups"]) <= {group} for w in windows.lines)
    assert seen[-1]["lag"] > seen[0]["lag"] >= 30
    assert seen[-1]["lag_seconds"] > 0 and seen[-1]["members"] == 0
    assert seen[-1]["status"] != "OK" and seen[-1]["status"] == "STOP"


def test_one_lag_poll_gives_each_group_its_committed_lag_and_members(kafka_cluster, admin, topic_name):
    # the lag part asks for every group at once (one OffsetFetch, one DescribeGroups per coordinator): each group
    # still gets its own figures, a member that holds the partition counted
    bootstrap = kafka_cluster.bootstrap_servers
    fifty_records(admin, bootstrap, topic_name)
    committed = {f"lag-{topic_name}-{n}": offset for n, offset in enumerate((5, 10, 20))}
    for group, offset in committed.items():
        consumer = Consumer(quiet_client_config(bootstrap, **{"group.id": group, "enable.auto.commit": False}))
        consumer.commit(offsets=[TopicPartition(topic_name, 0, offset)], asynchronous=False)
        consumer.close()
    member = Consumer(quiet_client_config(bootstrap, **{"group.id": f"lag-{topic_name}-joined",
                                                         "enable.auto.commit": False, "auto.offset.reset": "earliest"}))
    member.subscribe([topic_name])
    try:
        wait_until(lambda: member.poll(0.5) is not None and member.assignment(), timeout_s=60,
                   what="the joined member to be assigned the partition")
        member.commit(offsets=[TopicPartition(topic_name, 0, 49)], asynchronous=False)
        collector = LagCollector(kafka_cluster.connection, [f"^lag-{topic_name}-"], MONITOR_GROUPS, 5, Recorder())
        try:
            found = collector.collect(0.0)
        finally:
            collector.close()
    finally:
        member.close()
    assert {group: (lag.lag, lag.members) for group, lag in found.items()} == {
        **{group: (50 - offset, 0) for group, offset in committed.items()}, f"lag-{topic_name}-joined": (1, 1)}

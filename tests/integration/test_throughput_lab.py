"""The throughput lab on a real broker: produce then consume with checked values, merged workers, open
loop, e2e under load, and a topic deleted under a running producer."""

import json
import os
import subprocess
import sys
import threading

import pytest
from confluent_kafka import Consumer, Producer

from kafkabench.admin import KafkaAdmin, quiet_client_config
from kafkabench.cluster import EmbeddedCluster
from kafkabench.cluster.target import Target
from kafkabench.config.properties import parse_overrides
from kafkabench.core.results import read_histogram, read_result
from kafkabench.core.events import Listener
from kafkabench.labs.base import LabFailed
from kafkabench.labs.throughput.run import run_throughput
from kafkabench.labs.throughput.scenario import ConsumeScenario, ProduceScenario
from kafkabench.waiting import wait_until
from kafkabench.workers.adapters.confluent import Adapter
from kafkabench.workers.produce import BATCH

pytestmark = pytest.mark.integration


class Recorder(Listener):
    def __init__(self, on_window=None):
        self.notes, self.windows = [], []
        self.on_window = on_window

    def note(self, message):
        self.notes.append(message)

    def window(self, role, entry):
        self.windows.append((role, entry))
        if self.on_window:
            self.on_window(role, entry)


def target_of(cluster) -> Target:
    embedded = isinstance(cluster, EmbeddedCluster)
    return Target.embedded(cluster) if embedded else Target.external(cluster.bootstrap_servers)


def run(request, cluster, out, listener=None):
    listener = listener or Recorder()
    return run_throughput(request, target_of(cluster), out, listener)


def test_produce_then_consume_the_same_records_with_a_payload_check(kafka_cluster, topic_name, tmp_path):
    payloads = []
    for index, size in enumerate((100, 300)):
        path = tmp_path / f"payload-{index}.bin"
        path.write_bytes(os.urandom(size))
        payloads.append(path)
    produced = run(ProduceScenario(topic=topic_name, partitions=2, payload=payloads, count=20_000,
                                     producers=2, interval=0.2), kafka_cluster, tmp_path / "produce")
    [producer_run] = produced.runs
    assert producer_run.error is None and producer_run.params["workers"] == 2
    assert producer_run.counters["acked"] == producer_run.counters["sent"] == 20_000
    assert producer_run.counters["payload_bytes"] == 10_000 * 100 + 10_000 * 300
    assert producer_run.counters["wire_bytes"] > producer_run.counters["payload_bytes"]
    assert producer_run.stats["publish_latency"].count == 20_000  # both producers' histograms, merged
    assert read_histogram(tmp_path / "produce", producer_run, "publish_latency").count == 20_000
    assert producer_run.throughput["records_per_s"] > 0 and producer_run.timeline

    consumed = run(ConsumeScenario(topic=topic_name, payload=payloads, count=20_000, check=True,
                                     interval=0.2), kafka_cluster, tmp_path / "consume")
    [consumer_run] = consumed.runs
    assert consumer_run.error is None
    assert consumer_run.counters["received"] == 20_000 and consumer_run.counters["payload_bytes"] == 4_000_000
    assert consumer_run.counters["unstamped"] == 20_000  # nobody was reading while it was produced: no stamps
    assert {"rebalance_s", "first_record_s"} <= set(consumer_run.timings)


def test_several_consumers_stop_together_at_the_count(kafka_cluster, topic_name, tmp_path):
    run(ProduceScenario(topic=topic_name, partitions=2, size=100, count=10_000, interval=0.2),
        kafka_cluster, tmp_path / "produce")
    document = run(ConsumeScenario(topic=topic_name, count=10_000, consumers=2, interval=0.2, timeout=60),
                   kafka_cluster, tmp_path / "consume")
    [consumer_run] = document.runs
    assert consumer_run.params["workers"] == 2
    assert consumer_run.counters["received"] == 10_000  # however unevenly the two partitions were filled
    # stopped at the count: a consumer that missed it would wait out the 60 s timeout; joining the group and reading
    # 10,000 records take a loaded machine seconds
    assert "idle_stop_s" not in consumer_run.timings and consumer_run.duration_s < 30


@pytest.mark.parametrize("client", ["confluent", "java"])
def test_several_consumers_reading_in_batches_stop_at_exactly_the_count(kafka_cluster, topic_name, tmp_path, client):
    """More records than asked, spread unevenly: each consumer stops at its partitions' share of the count."""
    run(ProduceScenario(topic=topic_name, partitions=3, size=100, count=30_000, interval=0.2),
        kafka_cluster, tmp_path / "produce")
    document = run(ConsumeScenario(topic=topic_name, count=10_001, consumers=2, client=client, interval=0.2,
                                   timeout=20), kafka_cluster, tmp_path / "consume")
    [consumer_run] = document.runs
    assert consumer_run.counters["received"] == 10_001
    assert consumer_run.counters["payload_bytes"] == 10_001 * 100
    assert "idle_stop_s" not in consumer_run.timings


@pytest.mark.parametrize("client", ["confluent", "kafka-python", "aiokafka"])
def test_e2e_under_load_every_acknowledged_record_is_read(kafka_cluster, tmp_path, client):
    document = run(ProduceScenario(size=200, count=3000, consumers=1, partitions=2, client=client,
                                     interval=0.2), kafka_cluster, tmp_path)
    producer_run, consumer_run = document.runs
    assert producer_run.counters["acked"] == 3000
    assert consumer_run.counters["received"] == 3000 and consumer_run.counters["unstamped"] == 0
    assert consumer_run.stats["e2e"].count == 3000
    assert consumer_run.stats["e2e"].p50_ms >= 0


def test_open_loop_rate_is_kept_and_delay_is_measured(kafka_cluster, tmp_path):
    document = run(ProduceScenario(size=100, count=1000, rate=2000, interval=0.1), kafka_cluster, tmp_path)
    [producer_run] = document.runs
    assert producer_run.stats["publish_delay"].count == 1000
    assert 0.45 <= producer_run.duration_s < 5
    # never ahead of the schedule (message 999 is due at 0.4995 s); a loaded machine may fall behind it, by as much
    # as publish_delay says, so the rate is bounded from above only
    assert producer_run.throughput["records_per_s"] <= 2000 * 1.05


def test_the_warmup_runs_at_the_rate_and_is_kept_out_of_every_figure(kafka_cluster, tmp_path):
    document = run(ProduceScenario(size=100, duration=1.0, warmup=0.5, rate=2000, consumers=1, interval=0.25),
                   kafka_cluster, tmp_path)
    producer_run, consumer_run = document.runs
    warmup = producer_run.params["warmup"]
    assert warmup["seconds"] == 0.5 and 0.4 < warmup["span_s"] < 1.5 and warmup["records"] > 0
    assert warmup["records"] + warmup["measured_records"] == producer_run.counters["acked"]
    assert producer_run.stats["publish_latency"].count == warmup["measured_records"]  # only the measured phase
    assert producer_run.stats["publish_delay"].count <= warmup["measured_records"]
    phases = [entry.get("phase") for entry in producer_run.timeline]
    assert phases[0] == "warmup" and phases[-1] is None and phases == sorted(phases, key=lambda p: p is None)
    assert consumer_run.params["warmup"]["records"] > 0  # the consumers' first windows too
    assert consumer_run.stats["e2e"].count == consumer_run.params["warmup"]["measured_records"]
    histogram = read_histogram(tmp_path, producer_run, "publish_latency")
    assert histogram.count == warmup["measured_records"]  # the kept histogram is the measured phase's


@pytest.mark.parametrize("client", ["confluent", "java", "kafka-python"])
def test_several_topics_keys_and_subscriptions_each_group_reads_every_record(kafka_cluster, topic_name, tmp_path,
                                                                           client):
    document = run(ProduceScenario(topic=topic_name, topics=3, partitions=2, keys="round_robin", count=1500,
                                   consumers=1, subscriptions=2, client=client, interval=0.5), kafka_cluster, tmp_path)
    producer_run, consumer_run = document.runs
    assert producer_run.counters["acked"] == 1500 and producer_run.params["topics"] == 3
    assert consumer_run.counters["received"] == 3000  # both groups read every record
    names = [f"{topic_name}-{index:04d}" for index in range(3)]
    with KafkaAdmin(kafka_cluster.bootstrap_servers) as admin:
        written = {name: sum(high for _, high in admin.offsets(name).values()) for name in names}
        # the topics in turn: each record (Java), each batch of BATCH (Python)
        assert sum(written.values()) == 1500 and max(written.values()) - min(written.values()) <= BATCH
        assert {p: high > 0 for p, (_, high) in admin.offsets(names[0]).items()} == {0: True, 1: True}
    consumer = Consumer({"bootstrap.servers": kafka_cluster.bootstrap_servers, "group.id": f"check-{topic_name}",
                         "auto.offset.reset": "earliest"})
    try:
        consumer.subscribe([names[0]])
        keys = {message.key() for message in consumer.consume(500, timeout=20) if message.error() is None}
    finally:
        consumer.close()
    assert keys and all(key.startswith(b"key") and len(key) == 10 for key in keys)  # every record keyed from the pool
    assert len(keys) > 100


def test_at_a_low_rate_the_produce_lab_says_where_the_publish_time_went(kafka_cluster, tmp_path):
    document = run(ProduceScenario(size=100, count=300, rate=600, partitions=2, interval=0.2), kafka_cluster, tmp_path)
    [producer_run] = document.runs
    parts = producer_run.params["broker_phases"]
    if not isinstance(kafka_cluster, EmbeddedCluster):
        assert parts["error"].startswith("not available: the brokers' request logs are on their own machines")
        return
    # every acknowledged record was carried by a logged request, each request weighed by its records
    assert parts["messages"] == producer_run.counters["acked"] == 300 and 0 < parts["requests"] <= 300
    assert parts["client_ms"] + parts["broker_ms"] == pytest.approx(producer_run.stats["publish_latency"].mean_ms)
    assert abs(parts["residual_ms"]) < 0.01 and parts["phases_ms"]["local (append)"] > 0
    unasked = run(ProduceScenario(size=100, count=300, interval=0.2), kafka_cluster, tmp_path / "fast")
    assert "broker_phases" not in unasked.runs[0].params  # as fast as possible: not logged unless asked


def test_a_topic_deleted_mid_run_ends_with_counted_errors_and_keeps_the_result(kafka_cluster, topic_name, tmp_path):
    def delete_once_acks_flow(role, entry):
        if role == "produce" and entry.records and not deleted:  # the first window may hold none on a loaded machine
            deleted.append(True)
            with KafkaAdmin(kafka_cluster.bootstrap_servers) as admin:
                admin.delete_topic(topic_name)

    deleted = []
    request = ProduceScenario(topic=topic_name, size=100, duration=60, rate=500, interval=0.5, timeout=3,
                                overrides=parse_overrides(["delivery.timeout.ms=3000", "request.timeout.ms=2000"]))
    with pytest.raises(LabFailed, match="sends failed .* and none succeeded for 3 s; partial results kept"):
        run(request, kafka_cluster, tmp_path, Recorder(delete_once_acks_flow))
    document = read_result(tmp_path)
    [producer_run] = document.runs
    assert document.error and producer_run.error
    assert producer_run.counters["errors"] > 0
    assert any(key.startswith("errors.") for key in producer_run.counters)
    assert producer_run.counters["acked"] > 0  # what went through before is kept


def test_cli_produce_json_follows_the_contract(kafka_cluster, tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "kafkabench", "produce", "--count", "2000", "--size", "50", "--consumers", "1", "--interval", "0.2",
         "--bootstrap-servers", kafka_cluster.bootstrap_servers, "--out", str(tmp_path), "--json", "-X", "linger.ms=1"],
        capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)
    assert document == json.loads((tmp_path / "result.json").read_text())
    produce, consume = document["runs"]
    assert produce["scenario"] == "produce" and consume["scenario"] == "consume"
    for key in ("records_per_s", "payload_mb_per_s"):
        assert produce["throughput"][key] > 0 and consume["throughput"][key] > 0
    assert set(produce["stats"]) == {"publish_latency"} and set(consume["stats"]) == {"e2e"}
    assert produce["config"]["producer"]["linger.ms"] == "1"
    assert produce["resources"]["cpu_s"] > 0
    assert "rec/s" in done.stderr  # the progress lines


def test_a_consumer_from_latest_whose_assignment_lands_after_the_producers_started_reads_from_the_run_start(
        kafka_cluster, admin, topic_name):
    # a consumer that was ready (positioned at the end) is assigned again when another member joins; here that
    # assignment reaches it only once records were written. Pinned to the end then (the old way), its partition
    # skipped them: a CI run's 3 consumers read 11,987 of 12,000 with no error. It starts where the run started.
    admin.create_topic(topic_name, partitions=2)
    group, config = f"latest-{topic_name}", {"auto.offset.reset": "latest", "enable.auto.commit": False}
    first, second = Adapter(), Adapter()
    try:
        first.open_consumer(kafka_cluster.bootstrap_servers, {**config, "group.id": group})
        first.subscribe([topic_name], 30, at_end=True)
        assert len(first._consumer.assignment()) == 2
        second.open_consumer(kafka_cluster.bootstrap_servers, {**config, "group.id": group})
        joined = threading.Thread(target=second.subscribe, args=([topic_name], 30), kwargs={"at_end": True})
        joined.start()
        # the first member hands its partitions back (served by a poll that does not wait: the new assignment needs
        # round trips after that), then polls no more until the records exist: that assignment waits in its queue
        wait_until(lambda: not first.poll_batch(0, 1) and not first._consumer.assignment(), timeout_s=30,
                   what="the first member to give its partitions back", interval_s=0.01)
        joined.join(40)
        assert not joined.is_alive() and len(second._consumer.assignment()) == 1
        producer = Producer(quiet_client_config(kafka_cluster.bootstrap_servers))
        for n in range(20):
            producer.produce(topic_name, f"r{n}".encode(), partition=n % 2)
        assert producer.flush(30) == 0
        read = []
        wait_until(lambda: read.extend(first.poll_batch(0.1, 100).values() + second.poll_batch(0.1, 100).values())
                   or len(read) >= 20, timeout_s=30, what="the 20 records", interval_s=0)
        assert len(first._consumer.assignment()) == 1 and sorted(read) == sorted(f"r{n}".encode() for n in range(20))
    finally:
        first.close()
        second.close()

"""The monitor's parts as the serving process sees them: what a part records crosses as JSON and lands in the
metrics; a part that ends is restarted and counted, with its last words, after a backoff when it keeps dying young;
broker states from what the broker watch saw; the group coordinator found as the broker finds it."""

import json
from collections import deque

from kafkabench.connection import Connection
from kafkabench.labs.monitor.brokers import BrokerStates
from kafkabench.labs.monitor.metrics import MonitorMetrics, Recorder
from kafkabench.labs.monitor.parts import QUICK_DEATH_S, Parts
from kafkabench.labs.monitor.prober import coordinator_partition
from kafkabench.labs.monitor.scenario import MonitorScenario

from tests.unit.labs.test_monitor_metrics import exposition_names


def sample(metrics: MonitorMetrics, line_start: str) -> list[str]:
    return [line for line in metrics.exposition().decode().splitlines() if line.startswith(line_start)]


def test_what_a_part_records_crosses_as_json_and_lands_in_the_metrics():
    recorder, metrics = Recorder(), MonitorMetrics()
    recorder.know_partition(0, [1, 2, 3])
    recorder.lost.labels("0", "2").inc()
    recorder.roundtrip_latency.labels("0", "1").observe(0.002)
    recorder.set_status("g1", "STALL")
    recorder.lag.labels("g1", "orders", "0").set(5)
    recorder.lag.remove("g1", "orders", "0")
    metrics.apply(json.loads(json.dumps(recorder.take())))
    assert recorder.take() == []  # handed over once
    assert sorted(sample(metrics, "kafkabench_end_to_end_messages_lost_total{")) == [
        'kafkabench_end_to_end_messages_lost_total{broker_id="1",partition_id="0"} 0.0',
        'kafkabench_end_to_end_messages_lost_total{broker_id="2",partition_id="0"} 1.0',
        'kafkabench_end_to_end_messages_lost_total{broker_id="3",partition_id="0"} 0.0']
    assert sample(metrics, "kafkabench_end_to_end_roundtrip_latency_seconds_count") == [
        'kafkabench_end_to_end_roundtrip_latency_seconds_count{broker_id="1",partition_id="0"} 1.0']
    assert 'kafkabench_consumergroup_status{consumergroup="g1",status="STALL"} 1.0' in sample(metrics, "kafkabench_consumergroup_status")
    assert "kafka_consumergroup_lag" not in exposition_names(metrics)  # removed again


class Ended:
    """A part's process that has ended by `code` (negative: a signal)."""

    def __init__(self, code: int) -> None:
        self.code, self.pid = code, 4242

    def poll(self) -> int:
        return self.code


class Quiet:
    def join(self, timeout=None) -> None:
        pass


def parts_with(monkeypatch, *names: str):
    notes, started = [], []
    parts = Parts(Connection("127.0.0.1:9092"), MonitorScenario(), MonitorMetrics(), notes.append, names=names)
    monkeypatch.setattr(parts, "_start", lambda part: (started.append(part.name), setattr(part, "restart_at_s", None)))
    return parts, notes, started


def test_a_part_ended_by_a_signal_is_restarted_counted_and_told_with_its_last_words(monkeypatch):
    parts, notes, started = parts_with(monkeypatch, "lag", "prober")
    assert sample(parts._metrics, "kafkabench_monitor_part_restarts_total") == [
        'kafkabench_monitor_part_restarts_total{part="lag"} 0.0',
        'kafkabench_monitor_part_restarts_total{part="prober"} 0.0']
    lag = parts.parts["lag"]
    lag.process, lag.started_s, lag.stderr_reader = Ended(-6), -QUICK_DEATH_S * 10, Quiet()
    lag.stderr_tail = deque(["python: rdkafka_queue.h:1086: rd_kafka_enq_once_del_source_return: Assertion failed."])
    parts.parts["prober"].process = type("Running", (), {"poll": lambda self: None})()
    parts.parts["prober"].last_message_s = float("inf")
    parts._look_after()
    assert notes == ["monitor part lag was ended by SIGABRT: python: rdkafka_queue.h:1086: "
                     "rd_kafka_enq_once_del_source_return: Assertion failed.; restarting it (restart 1)"]
    parts._look_after()  # a part that ran long is started again at once
    assert started == ["lag"] and parts.states() == {"lag": {"state": "running", "restarts": 1},
                                                     "prober": {"state": "running", "restarts": 0}}
    assert 'kafkabench_monitor_part_restarts_total{part="lag"} 1.0' in sample(parts._metrics, "kafkabench_monitor_part")


def test_a_part_that_keeps_dying_young_waits_longer_each_time(monkeypatch):
    parts, notes, started = parts_with(monkeypatch, "prober")
    prober = parts.parts["prober"]
    waits = []
    for _ in range(3):
        prober.process, prober.stderr_reader, prober.restart_at_s = Ended(1), Quiet(), None
        prober.started_s = __import__("time").monotonic()
        parts._look_after()
        waits.append(prober.restart_at_s - prober.started_s)
        assert parts.states()["prober"]["state"] == "restarting"
    assert [round(w) for w in waits] == [1, 2, 4] and started == []
    assert notes[-1].startswith("monitor part prober exited with status 1; restarting it in 4 s (restart 3)")


def test_broker_states_tell_fenced_from_silent_and_keep_when_each_began():
    metrics = MonitorMetrics()
    states = BrokerStates(metrics)
    everyone = {"1": True, "2": True, "3": True}
    states.saw({"listed": [1, 2, 3], "answering": everyone, "leaders": {"0": 1, "1": 2, "2": 3},
                "preferred": {"0": 1, "1": 2, "2": 3}}, now_s=100.0)
    assert {b: v["state"] for b, v in states.view(100.0).items()} == {1: "up", 2: "up", 3: "up"}
    states.saw({"listed": [1, 2, 3], "answering": {**everyone, "2": False}, "leaders": {"0": 1, "1": 2, "2": 3},
                "preferred": {"0": 1, "1": 2, "2": 3}}, now_s=101.0)
    states.saw({"listed": [1, 3], "answering": {**everyone, "2": False}, "leaders": {"0": 1, "1": 3, "2": 3},
                "preferred": {"0": 1, "1": 2, "2": 3}}, now_s=104.0)
    view = states.view(116.0)
    assert view[2] == {"state": "fenced", "state_for_s": 12.0, "since_probe_leader_s": 15.0}
    assert view[1]["state"] == "up" and view[1]["since_probe_leader_s"] == 12.0
    assert sample(metrics, 'kafkabench_broker_up{broker_id="2"}') == ['kafkabench_broker_up{broker_id="2"} 0.0']
    assert sample(metrics, 'kafkabench_broker_seconds_since_probe_leader{broker_id="2"}') == [
        'kafkabench_broker_seconds_since_probe_leader{broker_id="2"} 3.0']  # led at 101 s, last look at 104 s


def test_the_coordinator_partition_is_javas_string_hash_as_the_broker_takes_it():
    assert coordinator_partition("hello", 50) == 99162322 % 50  # "hello".hashCode()
    assert coordinator_partition("polygenelubricants", 50) == 0  # hashCode() == Integer.MIN_VALUE: Utils.abs gives 0
    assert coordinator_partition("é", 50) == 233 % 50
    assert coordinator_partition("kafkabench-monitor-00ff", 1) == 0

"""A paced producer closes its progress windows on time at any rate: at 100 records/s a 0.2 s window holds about
20 records, not the 256 sends between two looks at the acknowledgements (which made a low-rate window seconds
long and left a short measured phase with no window at all)."""

import threading

import pytest

from kafkabench.core.clock import FakeClock
from kafkabench.core.protocol import KEY_POOL, ProduceParams, Progress, Task, pool_key
from kafkabench.core.rate import NAP_BELOW_NS
from kafkabench.workers.adapters.base import KafkaClient
from kafkabench.workers.produce import BATCH, ProduceRun


class Instant(KafkaClient):
    """Every send acknowledged at once, 1 ms after its send call."""

    name = "instant"

    def open_producer(self, bootstrap_servers, config, wire_stats=False, acks=None):
        self.acks = acks

    def send_many(self, topic, values, stamp=None, partition=None, keys=None):
        self.acks.latencies.extend([1_000_000] * len(values))
        return len(values)

    def poll(self, timeout_s):
        pass

    def flush(self, timeout_s):
        return 0

    def wire_bytes(self):
        return None

    def effective_config(self):
        return {}


class OnItsOwnClock(Instant):
    """Time passes only while the producer waits for its next due send: a poll takes its timeout, and a poll of 0 as
    long as the shortest wait the schedule makes (a real nap after it would take real time, on no clock of ours). The
    windows are judged on that clock, whatever else the machine is doing."""

    def __init__(self):
        self.clock = FakeClock(1_000_000_000)

    def poll(self, timeout_s):
        self.clock.advance(max(int(timeout_s * 1e9), NAP_BELOW_NS))


def test_windows_close_on_their_interval_at_a_low_rate():
    task = Task(scenario="produce", client="instant", bootstrap_servers="b", topic="t")
    client = OnItsOwnClock()
    run = ProduceRun(client, task, ProduceParams(duration_s=1.0, rate_per_s=100, interval_s=0.2),
                     [b"x" * 10], threading.Event(), clock=client.clock)
    run.open()
    windows = []
    run.run(lambda message: windows.append(message.window) if isinstance(message, Progress) else None)
    full = [w for w in windows[:-1]]  # the last one closes at the end, however short
    assert len(full) >= 4
    assert all(0.2 <= (w.end_ns - w.start_ns) / 1e9 < 0.3 and 15 <= w.records <= 25 for w in full)
    assert sum(w.records for w in windows) == run.counters["acked"] >= 95


class StallsOnce(OnItsOwnClock):
    """The 5th send call takes 50 ms; every record's stamp is kept as the client would write it."""

    def __init__(self):
        super().__init__()
        self.stamps = []

    def send_many(self, topic, values, stamp=None, partition=None, keys=None):
        if len(self.stamps) == 4:
            self.clock.advance(50_000_000)
        self.stamps.extend(stamp() for _ in values)
        return super().send_many(topic, values, stamp)


def test_a_paced_record_is_stamped_with_its_due_time_so_a_stall_shows_in_delay_and_e2e():
    """Coordinated omission: stamping the time the wait ended would hide the stall from e2e and publish_delay."""
    client = StallsOnce()
    task = Task(scenario="produce", client="instant", bootstrap_servers="b", topic="t")
    run = ProduceRun(client, task, ProduceParams(count=40, rate_per_s=1000, interval_s=1, stamp=True), [b"x"],
                     threading.Event(), clock=client.clock)
    run.open()
    run.run(lambda message: None)
    assert client.stamps == [run.start_ns + i * 1_000_000 for i in range(40)]
    assert run.stats.total["publish_delay"].summary().max_ms >= 40  # the records due during the stall went out late


class RecordsPartitions(Instant):
    def __init__(self):
        self.partitions = []

    def send_many(self, topic, values, stamp=None, partition=None, keys=None):
        self.partitions.extend([partition] * len(values))
        return super().send_many(topic, values, stamp)


@pytest.mark.parametrize("rate", [1000.0, -1.0])
def test_with_partitions_each_record_or_batch_goes_to_the_next_of_them_in_turn(rate):
    """Producer i of a pair writes only its node's partitions (`--launcher ray`: e2e measured within a node)."""
    client = RecordsPartitions()
    task = Task(scenario="produce", client="instant", bootstrap_servers="b", topic="t")
    run = ProduceRun(client, task, ProduceParams(count=600, rate_per_s=rate, partitions=[1, 4]), [b"x"], threading.Event())
    run.open()
    run.run(lambda message: None)
    assert set(client.partitions) == {1, 4} and len(client.partitions) == 600
    if rate > 0:
        assert client.partitions[:4] == [1, 4, 1, 4]
    else:  # in batches of BATCH
        assert client.partitions[:BATCH] == [1] * BATCH and client.partitions[BATCH:2 * BATCH] == [4] * BATCH


class RecordsTopicsAndKeys(Instant):
    def __init__(self, taking=None):
        self.sent, self.taking = [], taking  # taking: how many of each call the client's queue takes

    def send_many(self, topic, values, stamp=None, partition=None, keys=None):
        taken = len(values) if self.taking is None else min(self.taking, len(values))
        self.sent.extend((topic, key) for key in (keys or [None] * len(values))[:taken])
        super().send_many(topic, values[:taken], stamp)
        return taken


@pytest.mark.parametrize("rate", [1000.0, -1.0])
def test_several_topics_are_written_in_turn_and_keys_come_from_the_pool_in_turn(rate):
    client = RecordsTopicsAndKeys(taking=100)  # a full queue mid-batch: the keys stay with their values
    task = Task(scenario="produce", client="instant", bootstrap_servers="b", topic="t")
    params = ProduceParams(count=600, rate_per_s=rate, topics=["a", "b", "c"], keys="round_robin")
    run = ProduceRun(client, task, params, [b"x"], threading.Event())
    run.open()
    run.run(lambda message: None)
    assert [key for _, key in client.sent] == [pool_key(i) for i in range(600)]
    assert pool_key(0) == b"key0000000" and pool_key(KEY_POOL) == pool_key(0) and len(pool_key(9_999)) == 10
    topics = [topic for topic, _ in client.sent]
    if rate > 0:
        assert topics[:4] == ["a", "b", "c", "a"]
    else:  # each batch to the next topic, the rest of a batch the queue refused to the same one
        assert topics[:BATCH] == ["a"] * BATCH and topics[BATCH:2 * BATCH] == ["b"] * BATCH


def test_random_keys_are_drawn_from_the_pool_and_no_keys_are_none():
    client = RecordsTopicsAndKeys()
    task = Task(scenario="produce", client="instant", bootstrap_servers="b", topic="t")
    run = ProduceRun(client, task, ProduceParams(count=2000, keys="random"), [b"x"], threading.Event())
    run.open()
    run.run(lambda message: None)
    keys = [key for _, key in client.sent]
    assert set(keys) <= {pool_key(i) for i in range(KEY_POOL)} and len(set(keys)) > 1500
    client = RecordsTopicsAndKeys()
    run = ProduceRun(client, task, ProduceParams(count=10), [b"x"], threading.Event())
    run.open()
    run.run(lambda message: None)
    assert client.sent == [("t", None)] * 10


def test_every_paced_send_is_counted_with_its_delay_though_both_go_into_the_window_in_bulk():
    client = StallsOnce()
    task = Task(scenario="produce", client="instant", bootstrap_servers="b", topic="t")
    run = ProduceRun(client, task, ProduceParams(count=BATCH + 7, rate_per_s=1000, interval_s=1, stamp=True), [b"x"],
                     threading.Event(), clock=client.clock)
    run.open()
    run.run(lambda message: None)
    assert run.counters["sent"] == BATCH + 7
    assert run.stats.total["publish_delay"].summary().count == BATCH + 7

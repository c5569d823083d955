"""A delivery producer asked to stamp its messages (--e2e) gives each its intended send time, on this host's monotonic
clock: its slot on the open-loop schedule, however late the send call came; unasked, no header at all. The probe that
reads them runs only where that clock is its own."""

import math
from types import SimpleNamespace

import numpy as np
import pytest

from kafkabench.core.protocol import DeliveryParams, Task
from kafkabench.workers.adapters.base import Answers
from kafkabench.workers import delivery
from kafkabench.workers.delivery import DeliveryRun

RATE = 200.0


class Clock:
    """The worker's time, moved only by the client: a poll passes its timeout, a held send its hold."""

    def __init__(self):
        self.ns = 10**12

    def module(self) -> SimpleNamespace:
        return SimpleNamespace(perf_counter=lambda: self.ns / 1e9, monotonic=lambda: self.ns / 1e9,
                               monotonic_ns=lambda: self.ns)


class Recording:
    """A client that takes every send, remembers its stamp and when it was made, and acknowledges it at once."""

    name = "recording"

    def __init__(self, clock: Clock, held_at: int | None = None):
        self.clock, self.held_at = clock, held_at
        self.sends = []  # (stamp_ns, the clock at the call)

    def open_producer(self, bootstrap_servers, config, answers):
        self.answers = answers

    def send_tracked(self, topic, values, stamp_ns=None):
        if len(self.sends) == self.held_at:
            self.clock.ns += 50_000_000  # the client held this send call 50 ms: the schedule does not move
        for value in values:
            self.sends.append((stamp_ns, self.clock.ns))
            self.answers.append(value)
        return len(values)

    def read_answers(self, entries):
        return Answers(list(entries), [0] * len(entries), list(range(len(entries))), [None] * len(entries),
                       np.full(len(entries), 10.0))

    def poll(self, timeout_s):
        self.clock.ns += max(1, math.ceil(timeout_s * 1e9))  # a wait shorter than the clock's tick still passes

    def flush(self, timeout_s):
        return 0


def run(tmp_path, monkeypatch, stamp: bool, held_at: int | None = None) -> list[tuple[int | None, int]]:
    clock = Clock()
    monkeypatch.setattr(delivery, "time", clock.module())
    client = Recording(clock, held_at)
    params = DeliveryParams(mode="async-close", count=40, history_dir=str(tmp_path), size=20, singles=2,
                            rate_per_s=RATE, stamp=stamp)
    task = Task(scenario="delivery", client="confluent", bootstrap_servers="unused:9092", topic="t", timeout_s=10)
    worker = DeliveryRun(client, task, params)
    worker.open()
    worker.run()
    return client.sends


def test_a_stamped_message_carries_its_slot_on_the_schedule_not_its_late_send(tmp_path, monkeypatch):
    sends = run(tmp_path, monkeypatch, True, held_at=20)
    singles, bulk = sends[:2], sends[2:]
    assert all(stamp == called for stamp, called in singles)  # off the schedule: stamped when sent
    gaps = np.diff([stamp for stamp, _ in bulk])
    assert np.abs(gaps - 1e9 / RATE).max() <= 1  # one slot apart (to the ns: seconds in floats), across the held send
    late = [called - stamp for stamp, called in bulk]
    assert abs(late[18] - 50_000_000) <= 1 and max(late[:18]) < 5_000_000  # the held send (message 20) went 50 ms late


def test_an_unstamped_run_sends_no_header(tmp_path, monkeypatch):
    assert {stamp for stamp, _ in run(tmp_path, monkeypatch, False)} == {None}


def test_the_probe_is_refused_where_the_launcher_may_place_it_on_another_hosts_clock(tmp_path):
    from kafkabench.cluster.target import Target
    from kafkabench.core.events import SILENT
    from kafkabench.errors import ConfigError
    from kafkabench.labs.delivery.run import run_delivery
    from kafkabench.labs.delivery.scenario import DeliveryScenario

    target = Target("127.0.0.1:1", "external", launcher=SimpleNamespace(name="ray"))
    with pytest.raises(ConfigError, match="--e2e reads the producers' stamps on their host's clock"):
        run_delivery(DeliveryScenario(e2e=True, count=10), target, tmp_path, SILENT)
    with pytest.raises(ValueError, match="--e2e probes the producers' messages"):
        DeliveryScenario(e2e=True, copier=True)

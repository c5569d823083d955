"""A delivery producer asked to stamp its messages (--e2e) gives each its intended send time, on this host's monotonic
clock: its slot on the open-loop schedule, however late the send call came; unasked, no header at all. The probe that
reads them runs only where that clock is its own."""

import time

import numpy as np
import pytest

from kafkabench.core.protocol import DeliveryParams, Task
from kafkabench.workers.adapters.base import Answers
from kafkabench.workers.delivery import DeliveryRun

RATE = 200.0


class Recording:
    """A client that takes every send, remembers its stamp and when it was made, and acknowledges it at once."""

    name = "recording"

    def __init__(self, slow_from: int | None = None):
        self.sends, self.slow_from = [], slow_from  # (stamp_ns, monotonic ns of the call)

    def open_producer(self, bootstrap_servers, config, answers):
        self.answers = answers

    def send_tracked(self, topic, values, stamp_ns=None):
        if self.slow_from is not None and len(self.sends) == self.slow_from:
            time.sleep(0.05)  # the client held this send call: the schedule does not move
        for value in values:
            self.sends.append((stamp_ns, time.monotonic_ns()))
            self.answers.append(value)
        return len(values)

    def read_answers(self, entries):
        return Answers(list(entries), [0] * len(entries), list(range(len(entries))), [None] * len(entries),
                       np.full(len(entries), 10.0))

    def poll(self, timeout_s):
        time.sleep(min(timeout_s, 0.001))

    def flush(self, timeout_s):
        return 0


def run(tmp_path, stamp: bool, client: Recording) -> list[tuple[int | None, int]]:
    params = DeliveryParams(mode="async-close", count=40, history_dir=str(tmp_path), size=20, singles=2,
                            rate_per_s=RATE, stamp=stamp)
    task = Task(scenario="delivery", client="confluent", bootstrap_servers="unused:9092", topic="t", timeout_s=10)
    worker = DeliveryRun(client, task, params)
    worker.open()
    worker.run()
    return client.sends


def test_a_stamped_message_carries_its_slot_on_the_schedule_not_its_late_send(tmp_path):
    sends = run(tmp_path, True, Recording(slow_from=20))
    singles, bulk = sends[:2], sends[2:]
    assert all(stamp is not None and abs(stamp - called) < 2e6 for stamp, called in singles)  # off the schedule: now
    gaps = np.diff([stamp for stamp, _ in bulk])
    assert gaps == pytest.approx(1e9 / RATE, abs=2e5)  # one slot apart, even across the held send
    late = [called - stamp for stamp, called in bulk]
    assert late[18] >= 45e6 and max(late[:18]) < 45e6  # the held send (message 20) went out 50 ms after its slot


def test_an_unstamped_run_sends_no_header(tmp_path):
    assert {stamp for stamp, _ in run(tmp_path, False, Recording())} == {None}


def test_the_probe_is_refused_where_the_launcher_may_place_it_on_another_hosts_clock(tmp_path):
    from types import SimpleNamespace

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

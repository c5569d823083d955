"""A paced producer closes its progress windows on time at any rate: at 100 records/s a 0.2 s window holds about
20 records, not the 256 sends between two looks at the acknowledgements (which made a low-rate window seconds
long and left a short measured phase with no window at all)."""

import threading

from kafkabench.core.protocol import ProduceParams, Progress, Task
from kafkabench.workers.adapters.base import KafkaClient
from kafkabench.workers.produce import ProduceRun


class Instant(KafkaClient):
    """Every send acknowledged at once, 1 ms after its send call."""

    name = "instant"

    def open_producer(self, bootstrap_servers, config, wire_stats=False, acks=None):
        self.acks = acks

    def send_many(self, topic, values, stamp=None):
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


def test_windows_close_on_their_interval_at_a_low_rate():
    task = Task(scenario="produce", client="instant", bootstrap_servers="b", topic="t")
    run = ProduceRun(Instant(), task, ProduceParams(duration_s=1.0, rate_per_s=100, interval_s=0.2),
                     [b"x" * 10], threading.Event())
    run.open()
    windows = []
    run.run(lambda message: windows.append(message.window) if isinstance(message, Progress) else None)
    full = [w for w in windows[:-1]]  # the last one closes at the end, however short
    assert len(full) >= 4
    assert all(0.2 <= (w.end_ns - w.start_ns) / 1e9 < 0.3 and 15 <= w.records <= 25 for w in full)
    assert sum(w.records for w in windows) == run.counters["acked"] >= 95

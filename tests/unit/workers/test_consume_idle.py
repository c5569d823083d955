"""A consumer reading a backlog says how long it sat with nothing to read after its first record (`idle_s`) and how
many of those stretches were pauses in fetching (`stalls`, STALL_NS or more): records/s depends on how many fell
into a run (librdkafka's fetch.queue.backoff.ms), so a run must say which it measured."""

import threading

from kafkabench.core.clock import FakeClock
from kafkabench.core.protocol import ConsumeParams, Task
from kafkabench.workers.adapters.base import Batch, KafkaClient, Record
from kafkabench.workers.consume import POLL_S, STALL_NS, ConsumeRun


class Scripted(KafkaClient):
    """Each poll returns the next entry: a number of records, or 0 for an empty poll that waits out its timeout."""

    name = "scripted"

    def __init__(self, clock, script):
        self.clock, self.script = clock, list(script)

    def poll_batch(self, timeout_s, max_records):
        records = self.script.pop(0) if self.script else 0
        self.clock.advance(1_000_000 if records else int(timeout_s * 1e9))
        return Batch([Record(None, b"x", None, ("t", 0, 0))] * records)

    def fetching_since_ns(self):
        return None


def consumed(script, count):
    clock = FakeClock(1_000_000_000)
    task = Task(scenario="consume", client="scripted", bootstrap_servers="b", topic="t")
    run = ConsumeRun(Scripted(clock, script), task, ConsumeParams(group="g", count=count), threading.Event(), clock=clock)
    run.run(lambda message: None)
    return run


def test_a_pause_in_fetching_is_counted_and_timed_from_its_first_empty_poll_to_the_records_after_it():
    pause = int(STALL_NS / (POLL_S * 1e9)) + 2  # empty polls in a row: longer than STALL_NS
    run = consumed([0, 10, *[0] * pause, 10, 0, 10], 30)
    assert run.counters["received"] == 30
    assert run.counters["stalls"] == 1  # the wait before the first record and the one short gap are not pauses
    assert run.timings["idle_s"] == (pause + 1) * POLL_S + 2 * 0.001  # both gaps after the first record, ends included


def test_a_read_without_gaps_reports_no_idleness():
    run = consumed([10, 10, 10], 30)
    assert run.counters["stalls"] == 0 and run.timings["idle_s"] == 0

"""Where the consume clock starts: at the start signal, or where fetching began when records fetched before the
signal are already in hand, so they are not counted without the time it took to fetch them."""

import threading

from kafkabench.core.clock import FakeClock
from kafkabench.core.protocol import ConsumeParams, Task
from kafkabench.workers.adapters.base import Batch, KafkaClient
from kafkabench.workers.consume import ConsumeRun


class Prefetching(KafkaClient):
    """Held, it still fetches (as confluent does): records are in hand before the start; fetching began at 1 s."""

    name = "prefetching"

    def __init__(self, since_ns):
        self.since_ns = since_ns

    def fetching_since_ns(self):
        return self.since_ns


def run_of(client, clock):
    task = Task(scenario="consume", client="x", bootstrap_servers="b", topic="t")
    return ConsumeRun(client, task, ConsumeParams(group="g", count=10), threading.Event(), clock=clock)


def test_records_fetched_before_the_start_move_the_clock_back_to_where_fetching_began():
    clock = FakeClock(5_000_000_000)
    run = run_of(Prefetching(1_000_000_000), clock)
    run.until.begin()
    assert run.clock_start_ns() == 5_000_000_000  # nothing in hand yet: the start signal
    run.early.append(Batch([]))
    assert run.clock_start_ns() == 1_000_000_000


def test_a_client_that_paused_until_the_start_is_timed_from_the_start_signal():
    clock = FakeClock(5_000_000_000)
    run = run_of(Prefetching(None), clock)
    run.until.begin()
    run.early.append(Batch([]))
    assert run.clock_start_ns() == 5_000_000_000

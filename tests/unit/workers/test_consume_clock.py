"""Where the consume clock starts: at the start signal, or where fetching began when records fetched before the
signal are already in hand, so they are not counted without the time it took to fetch them."""

import threading
import time

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


class Record:
    """A record as kafka-python and aiokafka give it: attributes, its timestamp in ms since the epoch."""

    def __init__(self, timestamp: int) -> None:
        self.value, self.headers, self.timestamp = b"v", [], timestamp
        self.topic, self.partition, self.offset = "t", 0, 0


def test_omb_s_e2e_is_whole_milliseconds_from_the_records_timestamp_and_drops_what_is_not_above_0():
    task = Task(scenario="consume", client="x", bootstrap_servers="b", topic="t")
    run = ConsumeRun(Prefetching(None), task, ConsumeParams(group="g", count=10, record_time_e2e=True),
                     threading.Event(), clock=FakeClock(5_000_000_000))
    run.started_ns = 4_000_000_000
    now_ms = time.time_ns() // 1_000_000
    # 3 ms and 40 ms old; one stamped by a producer whose clock runs 5 ms ahead (counted in OMB as nothing)
    run._take(Batch([Record(now_ms - 3), Record(now_ms - 40), Record(now_ms + 5)]), 5_000_000_000)
    histogram = run.stats._pending["e2e_record_time"]
    recorded = sorted(int(value) for values in histogram for value in values)
    assert len(recorded) == 2 and 3000 <= recorded[0] <= 4000 and 40_000 <= recorded[1] <= 41_000
    assert all(value % 1000 == 0 for value in recorded) and run.counters["received"] == 3

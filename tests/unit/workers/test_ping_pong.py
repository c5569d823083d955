import pytest

from kafkabench.core.clock import FakeClock
from kafkabench.core.histogram import LatencyHistogram
from kafkabench.workers.ping_pong import Exchange, ExchangeFailed, PingPong

MS = 1_000_000


class ScriptedTransport:
    """Each exchange takes produce_ms to the ack and consume_ms more to the value, on a fake clock."""

    def __init__(self, clock: FakeClock, timings: list[tuple[int, int]], fail_at: int | None = None):
        self.clock = clock
        self.timings = timings
        self.fail_at = fail_at
        self.seqs: list[int] = []

    def version(self):
        return "scripted 1.0"

    def open(self):
        pass

    def exchange(self, seq):
        self.seqs.append(seq)
        if seq == self.fail_at:
            raise ExchangeFailed("timeout", f"no value for message {seq} within 1 s", acked=True)
        produce_ms, consume_ms = self.timings[(seq - 1) % len(self.timings)]
        sent = self.clock()
        self.clock.advance(produce_ms * MS)
        acked = self.clock()
        self.clock.advance(consume_ms * MS)
        return Exchange(sent, acked, self.clock())

    def finish(self):
        pass

    def effective_config(self):
        return {"producer": {"acks": "1"}, "consumer": {}}

    def close(self):
        pass


def decoded(outcome, metric):
    return LatencyHistogram.decode(outcome.histograms[metric])


def test_cold_is_separate_and_warm_up_is_not_measured():
    clock = FakeClock()
    timings = [(100, 50)] + [(1, 1)] * 3 + [(2, 3)]  # cold, 3 warm-up, then steady
    run = PingPong(ScriptedTransport(clock, timings), clock=clock)
    run.start(warmup=3)
    run.run_round(4)
    run.run_round(6)
    outcome = run.outcome("scripted 1.0")
    assert decoded(outcome, "cold").summary().max_ms == pytest.approx(150, rel=1e-3)
    e2e = decoded(outcome, "e2e")
    assert e2e.count == 10 and run.measured == 10
    assert decoded(outcome, "produce").summary().count == 10
    assert outcome.counters == {"sent": 14, "acked": 14, "received": 14, "errors": 0, "out_of_range": 0}
    assert outcome.effective_config == {"producer": {"acks": "1"}, "consumer": {}}
    assert outcome.duration_s > 0 and outcome.resources["max_rss_mb"] > 0


def test_a_pause_comes_before_every_exchange_but_the_cold_one_and_stays_out_of_every_clock():
    clock = FakeClock()
    transport = ScriptedTransport(clock, [(2, 3)])
    slept: list[tuple[int, float]] = []  # (exchanges so far, seconds)

    def sleep(seconds: float) -> None:
        slept.append((len(transport.seqs), seconds))
        clock.advance(int(seconds * 1e9))

    run = PingPong(transport, clock=clock, pause_s=0.25, sleep=sleep)
    run.start(warmup=2)
    run.run_round(3)
    assert slept == [(1, 0.25), (2, 0.25), (3, 0.25), (4, 0.25), (5, 0.25)]
    outcome = run.outcome("scripted 1.0")
    assert decoded(outcome, "e2e").summary().max_ms == pytest.approx(5, rel=1e-3)
    assert decoded(outcome, "cold").summary().max_ms == pytest.approx(5, rel=1e-3)


def test_split_adds_up_to_e2e():
    clock = FakeClock()
    run = PingPong(ScriptedTransport(clock, [(7, 2)]), clock=clock)
    run.start(warmup=0)
    run.run_round(5)
    outcome = run.outcome("v")
    assert decoded(outcome, "e2e").summary().p50_ms == pytest.approx(9, rel=1e-3)
    assert decoded(outcome, "produce").summary().p50_ms == pytest.approx(7, rel=1e-3)
    assert decoded(outcome, "consume").summary().p50_ms == pytest.approx(2, rel=1e-3)


def test_a_failure_keeps_what_was_measured_and_counts_the_error():
    clock = FakeClock()
    run = PingPong(ScriptedTransport(clock, [(1, 1)], fail_at=8), clock=clock)
    run.start(warmup=2)
    with pytest.raises(ExchangeFailed, match="no value for message 8"):
        run.run_round(10)
    outcome = run.outcome("v")
    assert decoded(outcome, "e2e").count == 4  # messages 4..7
    assert outcome.counters == {"sent": 8, "acked": 8, "received": 7, "errors": 1, "out_of_range": 0}

import pytest

from kafkabench.core.clock import FakeClock
from kafkabench.core.histogram import LatencyHistogram
from kafkabench.core.windows import WindowedStats

MS = 1_000_000


def test_windows_close_on_the_interval_and_fold_into_the_total():
    clock = FakeClock()
    stats = WindowedStats(("publish_latency",), interval_s=1.0, clock=clock, start_ns=0)
    for i in range(100):
        stats.record("publish_latency", 2 * MS)
        stats.count(records=1, payload_bytes=10)
    assert stats.due() is None
    clock.advance(1_000 * MS)
    first = stats.due()
    assert (first.index, first.records, first.payload_bytes, first.start_ns, first.end_ns) == (0, 100, 1000, 0, 1_000 * MS)
    assert LatencyHistogram.decode(first.histograms["publish_latency"]).count == 100
    stats.record("publish_latency", 50 * MS)
    stats.count(records=1, payload_bytes=10, errors=2)
    clock.advance(300 * MS)
    last = stats.close_window()
    assert (last.index, last.records, last.errors) == (1, 1, 2)
    assert LatencyHistogram.decode(last.histograms["publish_latency"]).summary().max_ms == pytest.approx(50, rel=1e-3)
    assert stats.total["publish_latency"].count == 101
    assert (stats.records, stats.payload_bytes, stats.errors) == (101, 1010, 2)


def test_fold_keeps_an_open_window_when_a_run_ends_early():
    clock = FakeClock()
    stats = WindowedStats(("e2e",), interval_s=10, clock=clock, start_ns=0)
    stats.record("e2e", MS)
    stats.record("e2e", -5_000)  # a negative latency cannot be represented: counted, not dropped
    assert stats.out_of_range == 1
    stats.fold()
    assert stats.total["e2e"].count == 1 and stats.out_of_range == 1

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kafkabench.core.clock import FakeClock
from kafkabench.core.histogram import LatencyHistogram
from kafkabench.core.windows import WindowedStats

MS = 1_000_000


def test_windows_close_on_the_interval_and_fold_into_the_total():
    clock = FakeClock()
    stats = WindowedStats(("publish_latency",), interval_s=1.0, clock=clock, start_ns=0)
    stats.add_us("publish_latency", np.full(100, 2_000, dtype=np.int64))
    stats.count(records=100, payload_bytes=1000)
    assert not stats.due()
    clock.advance(1_000 * MS)
    assert stats.due()
    first = stats.close_window()
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
    stats.add_us("e2e", np.array([-1, 3_000], dtype=np.int64))
    stats.fold()
    assert stats.total["e2e"].count == 2 and stats.out_of_range == 2


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.integers(min_value=0, max_value=3), st.lists(st.integers(0, 10**7), max_size=50)),
                max_size=30))
def test_every_value_lands_in_exactly_one_window(steps):
    """Values added between window closes, in bulk or one by one, end in exactly one window, and the
    windows together are the total."""
    clock = FakeClock()
    stats = WindowedStats(("e2e",), interval_s=0.5, clock=clock, start_ns=0)
    windows, every = [], LatencyHistogram()
    for advance_s, micros in steps:
        stats.add_us("e2e", np.array(micros[::2], dtype=np.int64))
        for value in micros[1::2]:
            stats.record("e2e", value * 1000)
        for value in micros:
            every.record_ns(value * 1000)
        clock.advance(advance_s * 250 * MS)
        if stats.due():
            windows.append(stats.close_window())
    windows.append(stats.close_window())
    merged = LatencyHistogram()
    for window in windows:
        merged.merge(LatencyHistogram.decode(window.histograms["e2e"]))
    assert merged.count == every.count == stats.total["e2e"].count
    assert merged.encode() == every.encode() == stats.total["e2e"].encode()
    assert [w.index for w in windows] == list(range(len(windows)))


def test_values_beyond_the_raw_buffer_are_folded_early_and_all_kept():
    clock = FakeClock()
    stats = WindowedStats(("e2e",), interval_s=1.0, clock=clock, start_ns=0)
    for _ in range(5):
        stats.add_us("e2e", np.arange(40_000, dtype=np.int64))
    window = stats.close_window()
    assert LatencyHistogram.decode(window.histograms["e2e"]).count == 200_000 == stats.total["e2e"].count

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kafkabench.core.histogram import HIGHEST_US, LatencyHistogram
from kafkabench.core.windows import ns_to_us


def test_records_in_microseconds_and_summarises_in_ms():
    h = LatencyHistogram()
    for ms in range(1, 101):
        assert h.record_ns(ms * 1_000_000)
    s = h.summary()
    assert s.count == 100
    assert s.p50_ms == pytest.approx(50, rel=1e-3)
    assert s.p99_ms == pytest.approx(99, rel=1e-3)
    assert s.max_ms == pytest.approx(100, rel=1e-3)
    assert s.min_ms == pytest.approx(1, rel=1e-3)
    assert s.mean_ms == pytest.approx(50.5, rel=1e-3)


def test_out_of_range_is_counted_not_dropped_silently():
    h = LatencyHistogram()
    assert not h.record_ns(-5_000)
    assert not h.record_ns((HIGHEST_US + 10) * 1000)
    assert h.record_ns(400)  # rounds to 0 us: representable
    assert (h.count, h.out_of_range, h.negative) == (1, 2, 1)


def test_negative_latencies_are_counted_apart_in_bulk_and_through_a_merge_never_clamped():
    """An e2e latency read on two hosts' clocks can come out below zero: it must not become 0 us."""
    h = LatencyHistogram()
    assert h.record_many_us(np.array([-300, -1, 0, 5, HIGHEST_US + 1], dtype=np.int64)) == 3
    assert (h.count, h.out_of_range, h.negative) == (2, 3, 2)
    assert h.summary().min_ms == 0.0  # the 0 us recorded, not a clamped -300
    merged = LatencyHistogram()
    merged.merge(h)
    merged.merge(h)
    assert (merged.out_of_range, merged.negative) == (6, 4)


def test_encode_decode_merge_keeps_every_value():
    a, b = LatencyHistogram(), LatencyHistogram()
    for v in range(1000):
        a.record_ns(1_000_000 + v * 1000)
    for v in range(1000):
        b.record_ns(50_000_000 + v * 1000)
    b.out_of_range = 3
    merged = LatencyHistogram.decode(a.encode())
    merged.merge(LatencyHistogram.decode(b.encode(), out_of_range=b.out_of_range))
    assert merged.count == 2000 and merged.out_of_range == 3
    assert merged.summary().p50_ms == pytest.approx(2.0, rel=2e-3)  # the merged median, not an average of medians
    assert merged.summary().max_ms == pytest.approx(50.999, rel=1e-3)


def test_empty_histogram_has_no_summary():
    assert LatencyHistogram().summary() is None


def test_recorded_steps_are_the_recorded_values_hdrhistogram_iterates():
    histogram = LatencyHistogram()
    for micros in [1, *range(100, 20_000, 7), 2_500_000]:
        histogram.record_ns(micros * 1000)
    iterated = []
    for item in histogram._hdr.get_recorded_iterator():  # one mutable item: copy its fields at every step
        upto = item.total_count_to_this_value
        iterated.append((upto - item.count_at_value_iterated_to, upto, item.value_iterated_to))
    assert histogram.recorded_steps() == iterated
    assert iterated[-1][1] == histogram.count


latencies_us = st.one_of(
    st.integers(min_value=0, max_value=5_000),  # exact buckets
    st.integers(min_value=0, max_value=HIGHEST_US),  # every magnitude
    st.integers(min_value=-10_000, max_value=-1),  # negative: out of range
    st.integers(min_value=HIGHEST_US + 1, max_value=HIGHEST_US * 4),  # too large: out of range
    st.sampled_from([0, 1, 2047, 2048, 2049, 4095, 4096, HIGHEST_US]),  # bucket edges
)


@settings(max_examples=300, deadline=None)
@given(st.lists(latencies_us, max_size=400))
def test_bulk_folding_gives_the_histogram_of_recording_one_by_one(values):
    one_by_one, bulk = LatencyHistogram(), LatencyHistogram()
    for micros in values:
        one_by_one.record_ns(micros * 1000)
    assert bulk.record_many_us(np.array(values, dtype=np.int64)) == one_by_one.out_of_range
    a, b = one_by_one._hdr, bulk._hdr
    assert bytes(a.counts) == bytes(b.counts)  # the raw counter arrays, compared whole
    assert (a.get_total_count(), a.get_min_value(), a.get_max_value()) == (b.get_total_count(), b.get_min_value(), b.get_max_value())
    assert one_by_one.out_of_range == bulk.out_of_range
    assert one_by_one.encode() == bulk.encode()  # the same state, so the same summary (hdrh's mean takes 0.2 s a call)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.integers(min_value=-2_000_000, max_value=10**13), max_size=200))
def test_nanoseconds_round_to_microseconds_as_record_ns_does(nanoseconds):
    one_by_one, bulk = LatencyHistogram(), LatencyHistogram()
    for ns in nanoseconds:
        one_by_one.record_ns(ns)
    bulk.record_many_us(ns_to_us(np.array(nanoseconds, dtype=np.int64)))
    assert one_by_one.encode() == bulk.encode() and one_by_one.out_of_range == bulk.out_of_range


@settings(max_examples=25, deadline=None)  # hdrh's own mean walks the whole counts array: 40 ms a call
@given(st.lists(latencies_us, min_size=1, max_size=300), st.lists(st.integers(1, 50), min_size=1, max_size=300))
def test_the_summary_is_exactly_what_hdrhistogram_itself_reads(values, repeats):
    h = LatencyHistogram()
    h.record_many_us(np.repeat(np.array(values, dtype=np.int64), repeats[:len(values)] + [1] * (len(values) - len(repeats))))
    if h.count == 0:
        return
    hdr, s = h._hdr, h.summary()
    assert s.mean_ms == hdr.get_mean_value() / 1000
    assert [s.p50_ms, s.p90_ms, s.p99_ms, s.p999_ms] == [hdr.get_value_at_percentile(p) / 1000 for p in (50, 90, 99, 99.9)]
    assert (s.count, s.max_ms, s.min_ms) == (hdr.get_total_count(), hdr.get_max_value() / 1000, hdr.get_min_value() / 1000)
    assert h.percentiles_ms(0, 100, 33.3) == [hdr.get_value_at_percentile(p) / 1000 for p in (0, 100, 33.3)]


def test_an_empty_histograms_percentiles_are_zero_as_hdrhistogram_says():
    assert LatencyHistogram().percentiles_ms(0, 50, 100) == [0.0, 0.0, 0.0]

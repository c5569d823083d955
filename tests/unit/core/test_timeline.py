import pytest

from kafkabench.core.histogram import LatencyHistogram
from kafkabench.core.merge import MB
from kafkabench.core.protocol import Window
from kafkabench.core.timeline import Timeline, TimelineEntry, phase_histograms

S = 1_000_000_000
PUBLIC = {"t_s", "records", "records_per_s", "mb_per_s", "errors", "metric", "p50_ms", "p99_ms"}


def histogram(*ms):
    h = LatencyHistogram()
    for value in ms:
        h.record_ns(int(value * 1e6))
    return h.encode()


def test_timeline_waits_for_every_running_worker_then_merges_by_index():
    timeline = Timeline(["p1", "p2"], "publish_latency")
    w = lambda i, records, ms: Window(index=i, start_ns=i * 10**9, end_ns=(i + 1) * 10**9, records=records,
                                      payload_bytes=records * 100, histograms={"publish_latency": histogram(ms)})
    assert timeline.add("p1", w(0, 1000, 1)) == []
    [entry] = timeline.add("p2", w(0, 3000, 9))
    assert entry.records == 4000 and entry.records_per_s == pytest.approx(4000)
    assert entry.p99_ms == pytest.approx(9, rel=1e-2)  # from the merged histogram, not an average
    assert timeline.add("p1", w(1, 500, 1)) == []
    [late] = timeline.finished("p2")  # p2 ended: window 1 no longer waits for it
    assert late.records == 500 and len(timeline.entries) == 2


def test_entries_dump_exactly_the_keys_result_files_keep():
    timeline = Timeline(["c1"], "e2e")
    timeline.add("c1", Window(index=0, start_ns=5 * S, end_ns=7 * S, records=10, payload_bytes=4 * MB, errors=1))
    [entry] = timeline.entries
    assert set(entry.model_dump()) == PUBLIC | {"phase"} == set(TimelineEntry.model_fields)
    assert timeline.as_dicts() == [{"t_s": 2.0, "records": 10, "records_per_s": 5.0, "mb_per_s": 2.0, "errors": 1,
                                    "metric": "e2e", "p50_ms": None, "p99_ms": None}]


def _latencies_us(i: int) -> tuple[int, ...]:
    return (10 + i % 50,) if i % 97 else (10 + i % 50, 1500)  # an outlier now and then moves a p99


def _window(i: int, encoded: dict[tuple, str]) -> Window:
    latencies_us = _latencies_us(i)
    if latencies_us not in encoded:
        encoded[latencies_us] = _histogram_us(latencies_us).encode()
    return Window(index=i, start_ns=i * S, end_ns=(i + 1) * S, records=1 + i % 7, payload_bytes=100 * (1 + i % 7),
                  errors=i % 3, histograms={"e2e": encoded[latencies_us]})


def _histogram_us(latencies_us, into=None) -> LatencyHistogram:
    into = into or LatencyHistogram()
    for us in latencies_us:
        into.record_ns(us * 1000)
    return into


def test_a_long_run_stays_within_max_entries_and_keeps_every_record():
    encoded: dict[tuple, str] = {}
    windows = [_window(i, encoded) for i in range(10_000)]
    timeline = Timeline(["c1"], "e2e", max_entries=100)
    for window in windows:
        [fresh] = timeline.add("c1", window)
        assert fresh.records == window.records  # listeners still see every window
        assert len(timeline.entries) <= 100
    entries = timeline.entries
    assert len(entries) == 100
    assert sum(e.records for e in entries) == sum(w.records for w in windows)
    assert sum(e.errors for e in entries) == sum(w.errors for w in windows)
    ends = [round(e.t_s) for e in entries]  # window i ends at i + 1 s
    assert ends == sorted(ends) and ends[-1] == 10_000
    for entry, first, last in zip(entries, [0] + ends[:-1], ends):
        covered = windows[first:last]
        merged = LatencyHistogram()
        for window in covered:
            _histogram_us(_latencies_us(window.index), into=merged)
        assert entry.p99_ms == merged.value_at_percentile_ms(99)  # merged, never averaged
        assert entry.p50_ms == merged.value_at_percentile_ms(50)
        assert entry.records_per_s == pytest.approx(sum(w.records for w in covered) / len(covered))
        assert entry.mb_per_s == pytest.approx(sum(w.payload_bytes for w in covered) / MB / len(covered))


def test_merged_entries_coarsen_evenly():
    timeline = Timeline(["p1"], "publish_latency", max_entries=8)
    for i in range(1000):
        timeline.add("p1", Window(index=i, start_ns=i * S, end_ns=(i + 1) * S, records=1, payload_bytes=0))
    widths = [e.records for e in timeline.entries[:-1]]  # one record a window; the newest entry is still filling
    assert max(widths) <= 3 * min(widths)  # no old stretch coarsened far more than a recent one


def test_a_timeline_keeps_at_least_one_entry():
    with pytest.raises(ValueError):
        Timeline(["p1"], "publish_latency", max_entries=0)


def test_the_warmup_windows_are_their_own_phase_never_merged_with_the_measured_ones():
    timeline = Timeline(["p1"], "publish_latency", max_entries=4, warmup_windows=3)
    for i in range(20):
        timeline.add("p1", Window(index=i, start_ns=i * S, end_ns=(i + 1) * S, records=1, payload_bytes=0,
                                  histograms={"publish_latency": histogram(1000 if i < 3 else 1),
                                              "publish_delay": histogram(2)}))
    warmup, measured = timeline.phase_entries("warmup"), timeline.phase_entries(None)
    assert sum(e.records for e in warmup) == 3 and sum(e.records for e in measured) == 17
    assert [d.get("phase") for d in timeline.as_dicts()][:len(warmup)] == ["warmup"] * len(warmup)
    assert "phase" not in timeline.as_dicts()[-1]  # measured entries dump as they always did
    merged = phase_histograms(measured)
    # the slow warm-up is out
    assert merged["publish_latency"].value_at_percentile_ms(100) == pytest.approx(1, rel=1e-2)
    assert merged["publish_delay"].count == 17  # every metric the windows carry, not only the timeline's

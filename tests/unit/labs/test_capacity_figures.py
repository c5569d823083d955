"""A step's figures from real timeline entries: only the measured seconds count, percentiles are the merged
windows' own with a bootstrap interval around them, lag is a slope; and SLOs as users write them."""

import numpy as np
import pytest

from kafkabench.core.histogram import LatencyHistogram
from kafkabench.core.protocol import Window
from kafkabench.core.timeline import Timeline
from kafkabench.errors import ConfigError
from kafkabench.labs.capacity.figures import percentile_interval, record_interval, slope_interval
from kafkabench.labs.capacity.scenario import BacklogScenario, parse_bytes
from kafkabench.labs.capacity.slo import Slo, parse_slo
from kafkabench.labs.capacity.step import Phase, judge, settle_note, step_figures

S = 1_000_000_000


def entries(role: str, metric: str, per_window: list[tuple[int, list[int]]], window_s: float = 1.0, offset_ns: int = 0):
    """Timeline entries of one worker: per window (records, latencies in us)."""
    timeline = Timeline(["w"], metric)
    out = []
    for index, (records, latencies) in enumerate(per_window):
        histogram = LatencyHistogram()
        histogram.record_many_us(np.asarray(latencies, dtype=np.int64))
        start = offset_ns + int(index * window_s * S)
        window = Window(index=index, start_ns=start, end_ns=start + int(window_s * S), records=records,
                        payload_bytes=records * 100, histograms={metric: histogram.encode()} if latencies else {})
        out += timeline.add("w", window)
    return out


@pytest.mark.parametrize("text, slo", [("p99=50ms", Slo(99, 50)), ("P99.9 = 1s", Slo(99.9, 1000)),
                                       ("p50=250us", Slo(50, 0.25)), ("p75=3.5ms", Slo(75, 3.5))])
def test_slos_are_read_as_written(text, slo):
    assert parse_slo(text) == slo


@pytest.mark.parametrize("text, message", [
    ("p99=50", "give the limit a unit"), ("p99<50ms", "write it as pNN=LIMIT"), ("p49=1ms", "between p50 and p99.9"),
    ("p99.99=1ms", "between p50 and p99.9"), ("p99=0ms", "more than 0"), ("99=5ms", "write it as pNN=LIMIT")])
def test_a_bad_slo_is_refused_in_one_line_naming_it(text, message):
    with pytest.raises(ConfigError, match=message) as error:
        parse_slo(text)
    assert str(error.value).startswith(f"--slo {text!r}: ") and "\n" not in str(error.value)


def test_the_percentile_is_the_merged_windows_own_and_its_interval_holds_it():
    rng = np.random.default_rng(5)
    windows = []
    for _ in range(12):
        histogram = LatencyHistogram()
        histogram.record_many_us(rng.lognormal(8, 0.7, 4000).astype(np.int64))
        windows.append(histogram)
    merged = LatencyHistogram()
    for window in windows:
        merged.merge(window)
    for percentile in (50, 99, 99.9):
        interval = percentile_interval(windows, percentile)
        assert interval.value == merged.value_at_percentile_ms(percentile)
        assert interval.low <= interval.value <= interval.high
    assert percentile_interval([], 99) is None
    single = percentile_interval(windows[:1], 99)
    assert single.low == single.value == single.high


def test_windows_unlike_each_other_widen_the_interval():
    calm, stormy = [], []
    for index in range(10):
        a, b = LatencyHistogram(), LatencyHistogram()
        a.record_many_us(np.full(1000, 10_000))
        b.record_many_us(np.full(1000, 10_000 if index % 2 else 40_000))
        calm.append(a), stormy.append(b)
    narrow, wide = percentile_interval(calm, 99), percentile_interval(stormy, 50)
    assert narrow.high - narrow.low < 0.1
    assert wide.low <= 10.01 and wide.high >= 39.9


def test_records_sent_one_at_a_time_are_resampled_one_by_one():
    rng = np.random.default_rng(3)
    few, many = LatencyHistogram(), LatencyHistogram()
    few.record_many_us(rng.lognormal(8, 0.5, 50).astype(np.int64))
    many.record_many_us(rng.lognormal(8, 0.5, 5000).astype(np.int64))
    narrow, wide = record_interval(many, 50), record_interval(few, 50)
    assert narrow.value == many.value_at_percentile_ms(50) and wide.value == few.value_at_percentile_ms(50)
    assert narrow.low <= narrow.value <= narrow.high and wide.low <= wide.value <= wide.high
    assert wide.high - wide.low > 3 * (narrow.high - narrow.low)  # 100x the records: about 10x narrower
    assert record_interval(LatencyHistogram(), 50) is None


def test_a_step_fails_clearly_only_past_what_one_pause_explains():
    spike = [(1000, [5_000] * 100)] * 9 + [(1000, [400_000] * 100)]  # one window of ten with a 400 ms pause
    paused = judge(step_figures("search", 1000, {"produce": entries("produce", "publish_latency", spike)},
                                Phase(0, 10), [Slo(99, 50)], "publish"), [Slo(99, 50)], "publish")
    assert not paused.passed and not paused.clearly
    slow = [(1000, [80_000] * 100)] * 10  # every window over the limit
    over = judge(step_figures("search", 1000, {"produce": entries("produce", "publish_latency", slow)},
                              Phase(0, 10), [Slo(99, 50)], "publish"), [Slo(99, 50)], "publish")
    assert not over.passed and over.clearly
    short = judge(step_figures("search", 2000, {"produce": entries("produce", "publish_latency", [(1000, [5_000] * 100)] * 10)},
                               Phase(0, 10), [Slo(99, 50)], "publish"), [Slo(99, 50)], "publish")
    assert short.reasons[0].startswith("achieved 1,000 records/s") and short.clearly


def test_the_slope_and_its_interval_on_synthetic_series():
    times = list(range(10))
    flat = slope_interval(times, [0.5, 0.52, 0.49, 0.51, 0.5, 0.48, 0.5, 0.51, 0.49, 0.5])
    assert flat.low < 0 < flat.high
    growing = slope_interval(times, [0.1 * t + (0.01 if t % 2 else -0.01) for t in times])
    assert growing.value == pytest.approx(0.1, abs=0.005) and growing.low > 0.09
    assert slope_interval([1, 2], [1, 2]) is None and slope_interval([1, 1, 1], [1, 2, 3]) is None


def test_only_the_measured_seconds_are_judged_and_growing_lag_fails_the_step():
    # 2 s settle, 4 s measured, 1 s windows at 1,000 records/s offered; settle latencies are far worse
    produced = entries("produce", "publish_latency", [(1000, [50_000] * 100)] * 2 + [(1000, [2_000] * 100)] * 4)
    keeping_up = entries("consume", "e2e", [(1000, [90_000] * 100)] * 2 + [(1000, [5_000] * 100)] * 4)
    step = judge(step_figures("search", 1000, {"produce": produced, "consume": keeping_up}, Phase(2, 4),
                              [Slo(99, 10)], "e2e"), [Slo(99, 10)], "e2e")
    assert step.achieved == pytest.approx(1000) and step.percentiles["p99"].value == pytest.approx(5.0, rel=0.01)
    assert step.histograms["publish_latency"].count == 400 and step.histograms["e2e"].count == 400
    assert step.passed, step.reasons

    # read at 80 % of the rate: each window's records are 200 ms older than the last's
    falling_behind = entries("consume", "e2e", [(1000, [5_000] * 100)] * 2 +
                             [(800, [5_000 + 200_000 * i] * 100) for i in range(1, 5)])
    step = judge(step_figures("search", 1000, {"produce": produced, "consume": falling_behind}, Phase(2, 4),
                              [Slo(99, 10)], "e2e"), [Slo(99, 10)], "e2e")
    assert step.lag_slope.value == pytest.approx(0.2, rel=0.01) and not step.passed
    assert step.reasons[0] == "consumer lag grew 200 ms per second (95 % from 200)"


def test_every_failed_check_is_named():
    produced = entries("produce", "publish_latency", [(500, [30_000] * 100)] * 4)
    produced_errors = produced
    step = step_figures("search", 1000, {"produce": produced_errors}, Phase(0, 4), [Slo(99, 10)], "publish")
    step.errors, step.error = 3, "broker 1 died"
    judge(step, [Slo(99, 10)], "publish")
    assert step.reasons == ["the run failed: broker 1 died",
                            "achieved 500 records/s, 50.0% of the offered rate (needs 98%)",
                            "3 sends failed", "publish p99 30 ms (95 % up to 30) > 10 ms"]
    empty = judge(step_figures("search", 1000, {}, Phase(1, 2), [Slo(99, 10)], "e2e"), [Slo(99, 10)], "e2e")
    assert empty.reasons == ["no measured window: the step ended before its measured seconds",
                             "no e2e latency measured for p99"]


@pytest.mark.parametrize("text, size", [("2GB", 2 * 10**9), ("500 MB", 500 * 10**6), ("512MiB", 512 * 2**20),
                                        ("1000", 1000), ("1.5kb", 1500)])
def test_a_backlog_size_is_read_as_written(text, size):
    assert parse_bytes(text) == size


def test_a_backlog_is_given_one_way_and_as_a_size():
    with pytest.raises(ValueError, match="give --backlog or --backlog-seconds, not both"):
        BacklogScenario(backlog="1GB", backlog_seconds=5)
    with pytest.raises(ValueError, match="give a size such as 2GB"):
        BacklogScenario(backlog="lots")
    assert BacklogScenario(backlog="1GiB").backlog_bytes == 2**30


def test_a_java_step_settles_long_enough_for_its_jvm_and_the_user_is_told():
    assert Phase(2, 8).for_client("java") == Phase(5, 8) and Phase(7, 8).for_client("java") == Phase(7, 8)
    assert Phase(2, 8).for_client("confluent") == Phase(2, 8)
    assert "settles 5 s, not 2" in settle_note("java", 2)
    assert settle_note("java", 5) is None and settle_note("confluent", 0) is None


def test_a_drain_shorter_than_a_window_still_has_the_producers_rate_from_the_windows_around_it():
    """Consumers that catch up within one producer window: no window lies inside the drain, so the rate is read
    from the windows around it, never left out (a backlog's headline compares the two rates)."""
    from kafkabench.core.events import SILENT
    from kafkabench.core.results import ResultDocument
    from kafkabench.labs.capacity.backlog import _figures, _Phases

    produced = entries("produce", "publish_latency", [(1000, [2_000] * 100)] * 6)  # 1 s windows, 1,000 records/s
    consumed = entries("consume", "e2e", [(6000, [300_000] * 100)], window_s=0.3, offset_ns=int(4.1 * S))
    phases = _Phases(SILENT, None, 4.0, 1000.0, origin_ns=0, drain_ns=int(4.1 * S), drained_ns=int(4.4 * S))
    phases.entries = {"produce": produced, "consume": consumed}
    document = ResultDocument(lab="backlog", created_at="now", params={})
    _figures(document, BacklogScenario(), phases, [])
    figures = document.params["backlog"]
    assert figures["produce_records_per_s"] == pytest.approx(1000)
    assert figures["catch_up_records_per_s"] == pytest.approx(20_000) and figures["drained"]


def test_backlog_seconds_count_from_the_producers_first_window_not_from_their_start_signal():
    from kafkabench.core.events import SILENT
    from kafkabench.labs.capacity.backlog import _Phases

    phases = _Phases(SILENT, None, 3.0, 1000.0, origin_ns=0)
    assert not phases.built(5 * S)  # no window yet: nothing produced that the build can count
    [first] = entries("produce", "publish_latency", [(1000, [2_000] * 100)], offset_ns=int(0.7 * S))
    phases.window("produce", first)
    assert not phases.built(int(3.6 * S)) and phases.built(int(3.7 * S))


def test_a_steps_warm_up_is_reported_apart_and_kept_out_of_its_verdict():
    # 3 s of warm-up with a JIT's 300 ms sends, then 7 measured seconds at 5 ms: the step passes on its measured part,
    # and its warm-up's own figures say when the client steadied
    windows = [(1000, [300_000] * 100)] * 3 + [(1000, [5_000] * 100)] * 7
    step = judge(step_figures("search", 1000, {"produce": entries("produce", "publish_latency", windows)},
                              Phase(3, 7), [Slo(99, 50)], "publish"), [Slo(99, 50)], "publish")
    assert step.passed and step.percentiles["p99"].value < 6
    assert step.warmup["windows"] == 3 and step.warmup["records"] == 3000 and step.warmup["metric"] == "publish"
    assert 299 < step.warmup["p99_ms"] <= step.warmup["max_ms"] < 301
    assert step.to_dict()["warmup"] == step.warmup
    assert step_figures("search", 1000, {"produce": entries("produce", "publish_latency", windows)}, Phase(0, 10),
                        [Slo(99, 50)], "publish").warmup is None


def test_a_steps_liveness_is_each_roles_longest_stall_and_the_report_says_it_under_faults():
    from kafkabench.core.results import ResultDocument
    from kafkabench.labs.capacity.report import stall_lines

    # 1 s windows: the producers' acknowledgements stop after 3 s and come back in the 8th; the consumers receive
    # nothing in the last 3 windows, so their stall lasts to the step's end
    sending = [(500, [2_000] * 10)] * 3 + [(0, [])] * 4 + [(500, [2_000] * 10)] * 3
    receiving = [(500, [9_000] * 10)] * 7 + [(0, [])] * 3
    step = step_figures("search", 500, {"produce": entries("produce", "publish_latency", sending),
                                        "consume": entries("consume", "e2e", receiving)},
                        Phase(0, 10), [Slo(99, 50)], "publish")
    assert step.liveness["produce"] == {"longest_stall_s": 5.0, "stalls": 1, "began_s": 3.0, "ended_s": 8.0,
                                        "ended": "recovered"}
    assert step.liveness["consume"] == {"longest_stall_s": 3.0, "stalls": 1, "began_s": 7.0, "ended_s": 10.0,
                                        "ended": "stuck"}
    steady = step_figures("search", 500, {"produce": entries("produce", "publish_latency", [(500, [2_000] * 10)] * 5)},
                          Phase(0, 5), [Slo(99, 50)], "publish")
    assert steady.liveness["produce"] == {"longest_stall_s": 0.0, "stalls": 0}
    document = ResultDocument(lab="capacity", created_at="now", params={
        "faults": [{"fault": "pause"}], "steps": [step.to_dict(), steady.to_dict()]})
    assert stall_lines(document) == [
        "liveness (produce): nothing acknowledged for 5.0 s in step 1, from 3.0 s into it, then recovered; "
        "1 of 2 steps stalled",
        "liveness (consume): nothing received for 3.0 s in step 1, from 7.0 s into it, until the step ended; "
        "1 of 1 steps stalled"]
    document.params["faults"] = []
    assert stall_lines(document) == []  # without faults, no liveness lines

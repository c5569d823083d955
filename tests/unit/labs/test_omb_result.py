"""OMB's result file from a run's windows: every key of OMB's TestResult, in its units, one value per measured
window."""

from datetime import datetime
from pathlib import Path

import numpy as np
import pytest

from kafkabench.core.histogram import LatencyHistogram
from kafkabench.core.protocol import Window
from kafkabench.core.timeline import Timeline
from kafkabench.labs.omb.result import omb_result, quantiles, result_name
from kafkabench.labs.omb.workload import Workload

S = 10**9
LISTS = ["publishRate", "publishErrorRate", "consumeRate", "backlog"] + [
    f"{name}{key}" for name in ("publishLatency", "publishDelayLatency", "endToEndLatency")
    for key in ("Avg", "50pct", "75pct", "95pct", "99pct", "999pct", "9999pct", "Max")]
AGGREGATED = [f"aggregated{name}{key}" for name in ("PublishLatency", "PublishDelayLatency", "EndToEndLatency")
              for key in ("Avg", "50pct", "75pct", "95pct", "99pct", "999pct", "9999pct", "Max", "Quantiles")]
WORKLOAD = Workload.model_validate({"name": "shape", "topics": 2, "partitionsPerTopic": 3, "messageSize": 100,
                                    "payloadFile": "p", "subscriptionsPerTopic": 2, "consumerPerSubscription": 1,
                                    "producersPerTopic": 1, "producerRate": 1000, "testDurationMinutes": 1})


def encoded(micros) -> str:
    histogram = LatencyHistogram()
    histogram.record_many_us(np.asarray(micros, dtype=np.int64))
    return histogram.encode()


def windows(role: str, records: list[int], micros_of, last_s: float = 10) -> list:
    metrics = ("publish_latency", "publish_delay") if role == "produce" else ("e2e",)
    timeline = Timeline(["w"], metrics[0], warmup_windows=1)
    fresh = []
    for index, count in enumerate(records):
        span = last_s if index == len(records) - 1 else 10
        fresh += timeline.add("w", Window(index=index, start_ns=index * 10 * S, end_ns=int((index * 10 + span) * S),
                                          records=count, payload_bytes=count * 100, errors=index,
                                          histograms={m: encoded(micros_of(index, m)) for m in metrics}))
    return fresh


def test_every_key_of_omb_s_result_one_value_per_measured_window_in_omb_s_units():
    # window 0 is the warm-up (slow), 1-3 are measured; the produce run ends with a short window of the last acks
    produced = windows("produce", [100, 1000, 1000, 1000, 20], lambda i, m: [50_000 if i == 0 else 2_000] * 10
                       if m == "publish_latency" else [300] * 10, last_s=0.01)
    consumed = windows("consume", [80, 1900, 2000, 2000, 140], lambda i, m: [(i + 1) * 1000] * 10)
    result = omb_result("shape", "Kafka", WORKLOAD, produced, consumed)
    assert set(LISTS + AGGREGATED) <= set(result)
    assert {result[key] for key in ("workload", "driver")} == {"shape", "Kafka"}
    assert (result["messageSize"], result["topics"], result["partitions"]) == (100, 2, 3)
    assert all(len(result[key]) == 3 for key in LISTS)  # the warm-up left out, the last acks folded into window 3
    assert result["publishRate"][:2] == [100.0, 100.0] and result["publishRate"][2] == pytest.approx(1020 / 10.01)
    assert result["publishErrorRate"][0] == pytest.approx(0.1)  # errors/s
    assert result["publishLatency99pct"][0] == pytest.approx(2.0, rel=1e-3)  # ms, the slow warm-up out
    assert result["publishDelayLatency99pct"][0] == 300 and isinstance(result["publishDelayLatency99pct"][0], int)
    assert result["endToEndLatency50pct"][0] == pytest.approx(2.0, rel=1e-3)  # consume window 1: 2 ms
    # what the consumers read after the producers' last window is in its last one
    assert result["consumeRate"][2] == pytest.approx((2000 + 140) / 20)
    # two subscriptions read every record: 2 x written - read, from the start of the load
    assert result["backlog"] == [2 * 1100 - 1980, 2 * 2100 - 3980, 2 * 3120 - 6120]
    assert result["aggregatedPublishLatencyMax"] == pytest.approx(2.0, rel=1e-3)
    assert result["aggregatedEndToEndLatencyQuantiles"]["100.0"] == pytest.approx(5.0, rel=1e-3)


def test_quantiles_step_as_hdr_histogram_s_percentile_iteration_and_end_at_the_maximum():
    histogram = LatencyHistogram()
    histogram.record_many_us(np.arange(1, 100_001))
    mapped = quantiles(histogram, 1e-3)
    levels = [float(key) for key in mapped]
    assert levels[:3] == [0.0, 0.5, 1.0] and levels[100:102] == [50.0, 50.25]  # 100 ticks per half distance
    assert levels == sorted(levels) and levels[-1] == 100.0
    assert mapped["50.0"] == pytest.approx(50.0, rel=1e-3) and mapped["100.0"] == pytest.approx(100.0, rel=1e-3)
    assert quantiles(LatencyHistogram(), 1e-3) == {}


def test_the_file_is_named_as_omb_names_it():
    name = result_name(Path("workloads/1-topic-16-partitions-1kb.yaml"), "Kafka", datetime(2024, 2, 8, 10, 51, 41))
    assert name == "1-topic-16-partitions-1kb-Kafka-2024-02-08-10-51-41.json"


def test_consumers_that_start_mid_run_out_of_step_leave_no_hole_and_lose_no_record():
    """A backlog's consumers start at the drain, half a window out of step with the producers' windows."""
    produced = windows("produce", [100] + [1000] * 8, lambda i, m: [1000] * 10)
    timeline = Timeline(["c"], "e2e")
    consumed = []
    for index in range(5):  # from 35 s to 85 s
        consumed += timeline.add("c", Window(index=index, start_ns=(35 + 10 * index) * S, end_ns=(45 + 10 * index) * S,
                                             records=3000, payload_bytes=0,
                                             histograms={"e2e": encoded([(index + 1) * 1000] * 10)}))
    result = omb_result("late", "Kafka", WORKLOAD, produced, consumed)
    rates = result["consumeRate"]  # windows 10-20, 20-30, 30-40, ..., 80-90 s
    assert rates[:2] == [0.0, 0.0] and rates[2] == pytest.approx(150.0) and all(r > 0 for r in rates[3:])
    assert sum(rate * 10 for rate in rates) == pytest.approx(5 * 3000)  # every record read, once
    assert all(p > 0 for p in result["endToEndLatency50pct"][2:])  # e2e wherever consumers read
    assert result["aggregatedEndToEndLatencyMax"] == pytest.approx(5.0, rel=1e-2)

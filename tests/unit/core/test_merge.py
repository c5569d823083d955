import pytest

from kafkabench.core.histogram import LatencyHistogram
from kafkabench.core.merge import MB, merge_histograms, resources, sum_counters, throughput, wall_span
from kafkabench.core.protocol import Outcome


def histogram(*ms):
    h = LatencyHistogram()
    for value in ms:
        h.record_ns(int(value * 1e6))
    return h.encode()


def test_outcomes_of_several_producers_merge():
    a = Outcome(histograms={"publish_latency": histogram(1, 2, 3)}, counters={"sent": 3, "acked": 3, "errors.X": 1},
                resources={"cpu_s": 1.0, "max_rss_mb": 50}, start_ns=100, end_ns=2_000_000_100)
    b = Outcome(histograms={"publish_latency": histogram(10, 20)}, counters={"sent": 2, "acked": 2},
                resources={"cpu_s": 0.5, "max_rss_mb": 70}, start_ns=50, end_ns=1_000_000_000)
    merged = merge_histograms([a, b])["publish_latency"]
    assert merged.count == 5 and merged.summary().max_ms == pytest.approx(20, rel=1e-3)
    assert sum_counters([a, b]) == {"sent": 5, "acked": 5, "errors.X": 1}
    assert wall_span([a, b]) == (50, 2_000_000_100)
    assert resources([a, b]) == {"cpu_s": 1.5, "max_rss_mb": 70}
    rates = throughput(5, 2 * MB, 0, 2_000_000_000)
    assert rates == {"records_per_s": 2.5, "payload_mb_per_s": 1.0}
    assert throughput(5, 10, None, None) == {}


def test_wire_bytes_are_summed_only_when_every_worker_counted_them():
    whole = Outcome(counters={"acked": 3, "payload_bytes": 300, "wire_bytes": 420})
    partial = Outcome(counters={"acked": 2, "payload_bytes": 200})  # a worker that died: its windows' counts only
    assert sum_counters([whole, whole]) == {"acked": 6, "payload_bytes": 600, "wire_bytes": 840}
    assert sum_counters([whole, partial]) == {"acked": 5, "payload_bytes": 500}  # not 420 wire bytes for 500 payload


def test_empty_histograms_and_missing_resources_leave_nothing_behind():
    quiet = Outcome(histograms={"e2e": LatencyHistogram().encode()})
    assert merge_histograms([quiet]) == {}
    assert resources([quiet]) == {}
    assert wall_span([quiet]) == (None, None)

"""Histograms encoded by the Java worker (HdrHistogram 2.2.2) decode and merge in Python unchanged.

The fixture was written by the Java worker's `--encode-fixture` mode (see tests/fixtures/README.md).
"""

import json
from pathlib import Path

import pytest
from hdrh.histogram import HdrHistogram

from kafkabench.core.histogram import HIGHEST_US, LOWEST_US, SIGNIFICANT_DIGITS, LatencyHistogram

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "java_histogram.json"
PERCENTILES = (0, 1, 10, 50, 90, 99, 99.9, 100)


@pytest.fixture(scope="module")
def fixture() -> dict:
    return json.loads(FIXTURE.read_text())


def python_histogram(values_us: list[int]) -> LatencyHistogram:
    histogram = LatencyHistogram()
    for value in values_us:
        assert histogram.record_ns(value * 1000)
    return histogram


def exact_percentile(values_us: list[int], percentile: float) -> int:
    """The value HdrHistogram reports, before bucketing: the one at rank round-half-up(p% of count), at least 1."""
    ordered = sorted(values_us)
    rank = max(1, int(percentile / 100 * len(ordered) + 0.5))
    return ordered[min(rank, len(ordered)) - 1]


def test_the_java_encoding_decodes_with_hdrh_directly(fixture):
    decoded = HdrHistogram.decode(fixture["encoded"])
    assert decoded.get_total_count() == len(fixture["values_us"])
    # The header carries the range the Java side was built with: the same as core.histogram's.
    assert (decoded.lowest_trackable_value, decoded.highest_trackable_value, decoded.significant_figures) == (
        LOWEST_US, HIGHEST_US, SIGNIFICANT_DIGITS)


def test_decoded_stats_match_the_values(fixture):
    values = fixture["values_us"]
    histogram = LatencyHistogram.decode(fixture["encoded"])
    summary = histogram.summary()
    assert summary.count == len(values)
    assert summary.min_ms == min(values) / 1000
    assert summary.max_ms == pytest.approx(max(values) / 1000, rel=1e-3)  # 3 significant digits
    for percentile in PERCENTILES:
        expected = exact_percentile(values, percentile)
        assert histogram.value_at_percentile_ms(percentile) == pytest.approx(expected / 1000, rel=1e-3, abs=1e-3)


def test_decoded_histogram_equals_the_same_values_recorded_in_python(fixture):
    from_java = LatencyHistogram.decode(fixture["encoded"])
    from_python = python_histogram(fixture["values_us"])
    assert from_java.summary() == from_python.summary()
    assert from_java.recorded_steps() == from_python.recorded_steps()


def test_merging_a_java_histogram_with_a_python_one(fixture):
    java_values = fixture["values_us"]
    python_values = [250 + 3 * i for i in range(500)] + [75_000, 2_500_000]
    merged = LatencyHistogram.decode(fixture["encoded"], out_of_range=2)
    merged.merge(python_histogram(python_values))

    assert merged.count == len(java_values) + len(python_values)
    assert merged.out_of_range == 2
    everything = java_values + python_values
    for percentile in PERCENTILES:
        expected = exact_percentile(everything, percentile)
        assert merged.value_at_percentile_ms(percentile) == pytest.approx(expected / 1000, rel=1e-3, abs=1e-3)
    assert merged.summary() == python_histogram(everything).summary()

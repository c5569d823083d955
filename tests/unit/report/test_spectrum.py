from hypothesis import given, settings
from hypothesis import strategies as st

from kafkabench.report.spectrum import axis_position, percentile_spectrum

from .results_factory import histogram, spread


def value_at(spectrum, total, level):
    """What the drawn step curve shows at a percentile level, read the way HdrHistogram reads it."""
    target = max(int(level / 100 * total + 0.5), 1)
    starts = [(round(p / 100 * total), value) for p, value in zip(spectrum["percentile"], spectrum["value_ms"])]
    return [value for below, value in starts if below < target][-1]


def test_a_big_run_keeps_its_tail_and_its_percentiles_in_a_few_hundred_points():
    recorded = histogram(spread(5.0, 100_000, 7) + [900.0])  # one stall, far out
    spectrum = percentile_spectrum(recorded)
    stat = recorded.summary()
    assert 50 < len(spectrum["percentile"]) < 1000
    assert spectrum["value_ms"][-1] == stat.max_ms  # the maximum is on the curve
    assert spectrum["percentile"][-1] == round((100_000 / 100_001) * 100, 9)  # where the stall's step starts
    for level, expected in ((50, stat.p50_ms), (90, stat.p90_ms), (99, stat.p99_ms), (99.9, stat.p999_ms)):
        assert value_at(spectrum, recorded.count, level) == expected, level


@settings(max_examples=25, deadline=None)
@given(st.lists(st.floats(min_value=0.002, max_value=5000, allow_nan=False), min_size=1, max_size=300))
def test_any_sample_the_curve_rises_ends_at_the_maximum_and_passes_through_the_stats(values):
    recorded = histogram(values)
    spectrum = percentile_spectrum(recorded)
    stat = recorded.summary()
    percentiles, ms = spectrum["percentile"], spectrum["value_ms"]
    assert percentiles[0] == 0 and all(a < b for a, b in zip(percentiles, percentiles[1:]))
    assert all(a < b for a, b in zip(ms, ms[1:]))
    assert ms[-1] == stat.max_ms and percentiles[-1] < 100
    for level, expected in ((50, stat.p50_ms), (90, stat.p90_ms), (99, stat.p99_ms), (99.9, stat.p999_ms)):
        assert value_at(spectrum, recorded.count, level) == expected, level


def test_an_empty_histogram_has_no_curve():
    assert percentile_spectrum(histogram([])) == {"percentile": [], "value_ms": []}


def test_axis_positions():
    assert [axis_position(p) for p in (0, 50, 90)] == [1, 2, 10]
    assert round(axis_position(99.9)) == 1000

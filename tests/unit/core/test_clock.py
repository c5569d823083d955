import time

from kafkabench.core.clock import monotonic_ns, shifted


def test_a_clock_shifted_by_nothing_is_the_bare_clock_and_a_shift_moves_every_reading():
    assert shifted(0) is monotonic_ns  # a local run's hot path pays nothing
    later = shifted(5_000_000_000)
    before = time.monotonic_ns()
    reading = later()
    assert before + 5_000_000_000 <= reading <= time.monotonic_ns() + 5_000_000_000

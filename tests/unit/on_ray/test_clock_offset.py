import pytest

from kafkabench.on_ray.clock import Clock, ClockEcho, UdpClockReader

AHEAD_NS = 5_000_000  # the node's monotonic clock against ours
BEHIND_S = 2  # the node's wall clock against ours


def test_the_offset_is_read_from_the_ping_with_the_lowest_round_trip_and_bounded_by_half_of_it():
    """Three pings of 900, 300 and 700 us, the node reading its clocks at different points of each trip: the 300 us
    one is kept, its error (read 50 us before its midpoint) within its bound."""
    sends, trips = [0, 1_000_000, 2_000_000], [900_000, 300_000, 700_000]
    read_at = [800_000, 1_100_000, 2_100_000]  # when the node read its clocks, on our monotonic clock
    ours = [t for send, trip in zip(sends, trips) for t in (send, send + trip)]
    monotonic, wall = iter(ours), iter(t + 10**18 for t in ours)
    node = iter((at + 10**18 - BEHIND_S * 10**9, at + AHEAD_NS) for at in read_at)
    clock = Clock.measure(lambda: next(node), pings=3, wall=lambda: next(wall), monotonic=lambda: next(monotonic))
    assert clock.bound_ns == 150_000
    assert clock.monotonic_offset_ns == AHEAD_NS - 50_000
    assert clock.wall_offset_ns == -BEHIND_S * 10**9 - 50_000
    assert abs(clock.monotonic_offset_ns - AHEAD_NS) <= clock.bound_ns


def test_a_node_on_this_machine_is_read_by_udp_within_a_millisecond_at_offset_zero():
    echo = ClockEcho("127.0.0.1")
    try:
        with UdpClockReader("127.0.0.1", echo.port) as reader:
            clock = Clock.measure(reader.read)
    finally:
        echo.close()
    assert clock.via == "udp" and clock.bound_ns < 1_000_000
    assert abs(clock.monotonic_offset_ns) <= clock.bound_ns  # the same clock on both ends


def test_an_echo_that_does_not_answer_is_a_timeout_not_a_hang():
    echo = ClockEcho("127.0.0.1")
    echo.close()
    with UdpClockReader("127.0.0.1", echo.port) as reader:
        with pytest.raises(TimeoutError):
            reader.read()


def test_a_java_workers_times_are_moved_onto_the_drivers_clock_as_they_arrive():
    """The Java worker reports on its node's own monotonic clock: windows and outcomes, partial ones too, move."""
    from kafkabench.core.protocol import Error, Outcome, Progress, Ready, Result, Window
    from kafkabench.on_ray.launcher import on_driver_clock

    window = Window(index=0, start_ns=1_000, end_ns=2_000, records=5, payload_bytes=50)
    assert on_driver_clock(Progress(done=5, window=window), -300).window.start_ns == 700
    assert on_driver_clock(Progress(done=5, window=window), -300).window.end_ns == 1_700
    moved = on_driver_clock(Result(start_ns=10_000, end_ns=20_000), -300)
    assert (moved.start_ns, moved.end_ns) == (9_700, 19_700)
    assert on_driver_clock(Result(), -300).start_ns is None  # nothing measured: nothing to move
    error = on_driver_clock(Error(message="x", kind="failure", partial=Outcome(start_ns=5, end_ns=6)), 10)
    assert (error.partial.start_ns, error.partial.end_ns) == (15, 16)
    assert on_driver_clock(Ready(client_version="4.1"), -300) == Ready(client_version="4.1")

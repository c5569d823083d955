import pytest

from kafkabench.core.clock import FakeClock
from kafkabench.core.histogram import LatencyHistogram
from kafkabench.core.rate import OpenLoopSchedule, wait_until

MS = 1_000_000


def test_schedule_hands_out_fixed_intended_times():
    schedule = OpenLoopSchedule(1000, start_ns=5 * MS)
    assert [schedule.intended(i) for i in range(4)] == [5 * MS, 6 * MS, 7 * MS, 8 * MS]
    assert OpenLoopSchedule(3, 0).intended(1) == 333_333_333


def test_a_stall_shows_up_in_publish_delay_and_the_schedule_is_not_rebased():
    """1000/s for 10 messages; the 4th send stalls 5 ms. The messages after it are late by what remains
    of the stall, and later ones are back on the original schedule: nothing is shifted."""
    clock = FakeClock()
    schedule = OpenLoopSchedule(1000, start_ns=clock())
    delay = LatencyHistogram()
    delays = []
    for i in range(10):
        intended = schedule.intended(i)
        wait_until(intended, clock, serve=lambda s: clock.advance(int(s * 1e9)), nap=lambda s: clock.advance(1_000))
        sent = clock()
        delays.append(sent - intended)
        delay.record_ns(sent - intended)
        clock.advance(5 * MS if i == 3 else 100_000)  # the send call itself; one of them stalls
    assert delays[:4] == [0, 0, 0, 0]
    # message 4 was due at 4 ms and went out at 8 ms; each later one catches up by the 0.9 ms it has to spare
    assert delays[4:9] == [4_000_000, 3_100_000, 2_200_000, 1_300_000, 400_000]
    assert delays[9] == 0  # caught up: message 9 went out at 9 ms, as planned from the start
    assert delay.summary().max_ms == pytest.approx(4.0, rel=1e-3)


def test_the_client_waits_while_far_from_the_due_time_and_naps_close_to_it():
    """A client's poll is the wait (its callbacks and I/O go on meanwhile); the last half millisecond is one nap,
    served before it, which the OS ends a little late."""
    clock = FakeClock()
    served, naps = [], []
    wait_until(10 * MS, clock, serve=lambda s: (served.append(s), clock.advance(int(s * 1e9))),
               nap=lambda s: (naps.append(s), clock.advance(int(s * 1e9) + 60_000)))
    assert served == [pytest.approx(0.0095), 0] and naps == [pytest.approx(0.0005)]
    assert clock() == 10 * MS + 60_000


def test_waiting_near_the_due_time_naps_instead_of_spinning():
    """Paced at 2,000/s (0.5 ms apart, all under NAP_BELOW_NS) for 0.2 s: the waits take little CPU (a loop of
    `sleep(0)` took 0.37 CPU s per second)."""
    import time

    schedule = OpenLoopSchedule(2000, start_ns=time.monotonic_ns())
    cpu0 = time.process_time()
    for index in range(400):
        wait_until(schedule.intended(index), serve=lambda s: None)
    assert time.process_time() - cpu0 < 0.05

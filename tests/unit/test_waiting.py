import pytest

from kafkabench.errors import WaitTimeout
from kafkabench.waiting import wait_until


class FakeClock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now

    def sleep(self, seconds):
        self.now += seconds


def test_returns_the_first_truthy_value():
    clock = FakeClock()
    values = iter([None, 0, "ready"])
    assert wait_until(lambda: next(values), timeout_s=5, what="x", clock=clock, sleep=clock.sleep) == "ready"
    assert clock.now == pytest.approx(0.2)


def test_times_out_with_what_and_hint():
    clock = FakeClock()
    with pytest.raises(WaitTimeout, match=r"timed out after 2 s waiting for the broker; look at the log"):
        wait_until(lambda: False, timeout_s=2, what="the broker", hint="look at the log", clock=clock, sleep=clock.sleep)
    assert 2 <= clock.now < 2.2


def test_condition_may_abort_early():
    def boom():
        raise RuntimeError("process died")

    with pytest.raises(RuntimeError, match="process died"):
        wait_until(boom, timeout_s=5, what="x")

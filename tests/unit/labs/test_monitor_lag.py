"""Lag in seconds from end-offset histories, and the group status rules, on synthetic offset histories; a poll's
groups asked at once, then one by one after a failure."""

import pytest
from kafka.errors import KafkaError

from kafkabench.labs.monitor.lag import EndOffsets, LagSeconds, Poll, group_status, partition_status
from kafkabench.labs.monitor.lag_collector import MONITOR_GROUPS, LagCollector
from kafkabench.labs.monitor.metrics import Recorder


def history(*samples):
    offsets = EndOffsets(size=100)
    for time_s, end in samples:
        offsets.add(time_s, end)
    return offsets


def test_lag_seconds_is_the_age_of_the_oldest_unconsumed_record_interpolated_between_samples():
    offsets = history((0, 0), (10, 100), (20, 200))  # 10 records a second
    assert offsets.lag_seconds(200, now_s=25) == LagSeconds(0.0)
    assert offsets.lag_seconds(150, now_s=25).seconds == pytest.approx(25 - 15.1)  # offset 150 made at 15.1 s
    assert offsets.lag_seconds(0, now_s=25).seconds == pytest.approx(25 - 0.1)


def test_a_committed_offset_older_than_the_history_gives_a_lower_bound():
    offsets = history((100, 500), (110, 600))
    assert offsets.lag_seconds(120, now_s=130) == LagSeconds(30.0, at_least=True)
    assert history().lag_seconds(5, now_s=1) is None


def test_an_idle_partition_keeps_its_first_and_last_sample_so_a_burst_is_dated_right():
    offsets = history(*[(t, 50) for t in range(0, 1000, 10)], (1000, 60))
    assert len(offsets._samples) == 3  # (0, 50), (990, 50), (1000, 60)
    assert offsets.lag_seconds(50, now_s=1001).seconds == pytest.approx(1001 - 991)


def test_the_ring_is_bounded():
    offsets = EndOffsets(size=5)
    for t in range(100):
        offsets.add(t, t * 10)
    assert len(offsets._samples) == 5 and offsets.latest == (99, 990)


def polls(*rows):
    return [Poll(t, committed, lag) for t, committed, lag in rows]


@pytest.mark.parametrize("rows, members, status", [
    ([(0, 10, 0), (1, 20, 5), (2, 30, 8)], 1, "OK"),  # a zero lag in the window
    ([(0, 10, 5), (1, 10, 8), (2, 10, 12)], 1, "STALL"),  # nothing moves, lag grows
    ([(0, 10, 5), (1, 10, 5), (2, 10, 5)], 1, "STALL"),  # nothing moves, lag holds
    ([(0, 10, 5), (1, 10, 8), (2, 10, 12)], 0, "STOP"),  # nobody is consuming
    ([(0, 10, 5), (1, 20, 8), (2, 30, 12)], 1, "WARNING"),  # moving, but falling behind
    ([(0, 10, 12), (1, 20, 8), (2, 30, 5)], 1, "OK"),  # catching up
    ([(0, 30, 0), (1, 10, 0), (2, 20, 0)], 1, "REWIND"),  # the offset went back
    ([(0, 10, 5)], 1, "OK"),  # one poll says nothing yet
])
def test_status_rules(rows, members, status):
    assert partition_status(polls(*rows), members) == status


def test_a_group_is_as_bad_as_its_worst_partition():
    assert group_status(["OK", "WARNING", "STALL"]) == "STALL"
    assert group_status(["REWIND", "STOP", "OK"]) == "STOP"
    assert group_status([]) == "OK"


class Coordinators:
    """kafka-python's admin client as the lag part calls it, raising as it does at a batch's first failing group."""

    def __init__(self, failing: set[str]) -> None:
        self.failing, self.calls = failing, []

    def describe_groups(self, groups: list[str]) -> dict:
        self.calls.append(list(groups))
        if self.failing & set(groups):
            raise KafkaError(f"the coordinator of {sorted(self.failing & set(groups))} is down")
        return {group: {"members": [{"member_id": "m"}] * len(group), "error": None} for group in groups}

    def close(self) -> None:
        pass


@pytest.mark.parametrize("failing, calls", [(set(), 1), ({"bb"}, 1 + 3)])
def test_a_poll_asks_every_group_at_once_and_group_by_group_only_after_a_batch_failed(failing, calls):
    collector = LagCollector("127.0.0.1:9", [], MONITOR_GROUPS, 5, Recorder())
    collector._groups_admin = client = Coordinators(failing)
    try:
        members = collector._members(["a", "bb", "ccc"])
    finally:
        collector.close()
    assert members == {group: len(group) for group in ("a", "bb", "ccc") if group not in failing}
    assert client.calls[0] == ["a", "bb", "ccc"] and len(client.calls) == calls

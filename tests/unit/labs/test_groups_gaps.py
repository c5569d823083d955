"""The unread spans, each partition's gap and the stop-the-world time, on recorded timelines worked out by hand."""

import numpy as np
import pytest

from kafkabench.core.delivery_processed import Processed
from kafkabench.labs.groups.gaps import Processings, gaps, unread_spans

MS = 1_000_000


def timeline(*rows):
    """(partition, processed at ms, created at ms) rows."""
    partition, at, created = (np.array(column, np.int64) for column in zip(*rows))
    return Processings(partition, at * MS, created * MS)


# two partitions, a record every 10 ms on each, read within 1 ms; then a rebalance: partition 0 unread from 50 ms
# (its next record; the last read was at 40) to 300 ms, partition 1 from 60 ms (its next record) to 250 ms
RECORDED = timeline(
    (0, 11, 10), (0, 21, 20), (0, 31, 30), (0, 40, 40),
    (1, 16, 15), (1, 26, 25), (1, 36, 35), (1, 52, 45),
    (1, 250, 60), (1, 251, 70),
    (0, 300, 50), (0, 301, 60),
)


def test_a_span_runs_from_the_record_or_the_previous_read_whichever_is_later():
    spans = unread_spans(RECORDED)
    assert (spans[0] / MS).tolist() == [[10, 11], [20, 21], [30, 31], [50, 300], [300, 301]]
    assert (spans[1] / MS).tolist() == [[15, 16], [25, 26], [35, 36], [45, 52], [60, 250], [250, 251]]


def test_each_partitions_gap_and_the_time_all_stood_still():
    found = gaps(RECORDED, (100 * MS, 400 * MS))
    assert found.longest_s == pytest.approx({0: 0.250, 1: 0.190})
    # the group read nothing from 52 ms (its last read before the change) to 250 ms, while partition 0's record of
    # 50 ms waited
    assert found.stop_the_world_s == pytest.approx(0.198) and found.stop_the_world_from_ns == 52 * MS
    assert found.worst_s == pytest.approx(0.250) and found.median_s == pytest.approx(0.220)


def test_before_the_change_the_group_never_stood_still():
    steady = gaps(RECORDED, (0, 39 * MS))
    assert steady.longest_s == pytest.approx({0: 0.001, 1: 0.001})
    # before the change the group was never idle with a record waiting for more than the read itself took
    assert steady.stop_the_world_s == pytest.approx(0.001)


def test_the_group_stops_when_it_reads_nothing_while_any_record_waits_even_on_a_partition_that_rarely_gets_one():
    # partition 1 gets a record every 10 ms and partition 0 one record in all: while the group reads nothing from 30 to
    # 200 ms, only partition 1 has records waiting; the group stood still all the same
    sparse = timeline((1, 11, 10), (1, 21, 20), (1, 31, 30), (0, 5, 1), (1, 200, 40), (1, 201, 50))
    found = gaps(sparse, (100 * MS, 300 * MS))
    assert found.stop_the_world_s == pytest.approx(0.160) and found.stop_the_world_from_ns == 40 * MS


def test_a_record_processed_twice_after_a_rebalance_counts_from_the_previous_read():
    again = timeline((0, 10, 5), (0, 500, 5), (0, 501, 490))  # processed again 490 ms later by the new owner
    assert (unread_spans(again)[0] / MS).tolist() == [[5, 10], [10, 500], [500, 501]]


def test_the_processings_come_from_the_members_histories(tmp_path):
    first, second = (Processed.create(tmp_path / name, producer=0, count=4) for name in ("a", "b"))
    first.record(0, 11 * MS, 10)
    first.record(1, 12 * MS, 10)
    second.record(1, 30 * MS, 10)  # again, by the next member
    second.record(3, 31 * MS, 20)
    found = Processings.of(np.array([0, 1, 0, 1]), [Processed.open(tmp_path / "a"), Processed.open(tmp_path / "b")])
    rows = sorted(zip(found.partition.tolist(), (found.at_ns // MS).tolist(), (found.created_ns // MS).tolist()))
    assert rows == [(0, 11, 10), (1, 12, 10), (1, 30, 10), (1, 31, 20)]


def test_a_span_the_change_prolonged_is_not_counted_in_the_steady_time_before_it():
    steady = gaps(RECORDED, (0, 100 * MS), whole=True)  # partition 0's span from 50 ms ends at 300 ms: not steady
    assert steady.longest_s == pytest.approx({0: 0.001, 1: 0.007})

"""Probe sequences with planted losses, duplicates, reorders and late arrivals, counted exactly."""

from hypothesis import given, strategies as st

from kafkabench.labs.monitor.sequences import SequenceTracker


def send(tracker, partition, count, start_s=0.0, every_s=1.0):
    return [(tracker.sent(partition, start_s + i * every_s), start_s + i * every_s) for i in range(count)]


def test_a_clean_stream_has_roundtrips_and_no_anomaly():
    tracker = SequenceTracker(sla_s=20, span=100)
    probes = send(tracker, 0, 5)
    trips = [tracker.read(0, sequence, sent + 0.004, sent) for sequence, sent in probes]
    assert [trip.sequence for trip in trips] == [0, 1, 2, 3, 4]
    assert all(abs(trip.seconds - 0.004) < 1e-9 for trip in trips)
    tracker.expire(100)
    counts = tracker.counts(0)
    assert (counts.sent, counts.read, counts.lost, counts.duplicated, counts.out_of_order, counts.late) == (5, 5, 0, 0, 0, 0)


def test_planted_anomalies_are_each_counted_in_their_own_counter():
    tracker = SequenceTracker(sla_s=20, span=100)
    probes = dict(send(tracker, 3, 10))  # sequences 0..9 sent at 0..9 s
    for sequence in (0, 1, 3, 2, 4, 4, 5, 7):  # 2 after 3: out of order; 4 twice: a duplicate
        tracker.read(3, sequence, probes[sequence] + 0.01, probes[sequence])
    assert tracker.expire(25.9) == []  # 6, 8 and 9 were never read; 6 was sent at 6 s, its SLA runs out after 26 s
    assert tracker.expire(26.1) == [(3, 6, -1)]
    assert tracker.expire(30) == [(3, 8, -1), (3, 9, -1)]
    counts = tracker.counts(3)
    assert (counts.read, counts.duplicated, counts.out_of_order, counts.lost, counts.late) == (7, 1, 1, 3, 0)


def test_a_probe_lost_at_its_sla_and_read_later_is_late_and_a_second_copy_a_duplicate():
    tracker = SequenceTracker(sla_s=5, span=100)
    (sequence, sent), = send(tracker, 1, 1)
    assert tracker.expire(4.9) == [] and tracker.expire(5.1) == [(1, 0, -1)]
    assert tracker.read(1, sequence, 7.0, sent) is None
    assert tracker.read(1, sequence, 7.5, sent) is None
    counts = tracker.counts(1)
    assert (counts.lost, counts.late, counts.read, counts.duplicated) == (1, 1, 1, 1)


def test_memory_is_bounded_by_the_span_and_older_sequences_are_expired_not_judged():
    tracker = SequenceTracker(sla_s=1000, span=10)
    send(tracker, 0, 25)
    state = tracker._partitions[0]
    assert len(state.pending) == 10 and len(state.seen) == 10
    assert tracker.counts(0).lost == 15  # more in flight than the span holds: given up, counted
    assert tracker.read(0, 3, 30.0, 3.0) is None and tracker.counts(0).expired == 1
    assert tracker.read(0, 99, 30.0, 3.0) is None and tracker.counts(0).expired == 2  # never sent


@given(st.permutations(list(range(30))), st.lists(st.integers(0, 29), max_size=10))
def test_any_order_of_reads_counts_each_first_read_once_and_every_copy_as_a_duplicate(order, again):
    tracker = SequenceTracker(sla_s=1000, span=64)
    probes = dict(send(tracker, 0, 30))
    for sequence in order + again:
        tracker.read(0, sequence, 40.0, probes[sequence])
    counts = tracker.counts(0)
    assert (counts.read, counts.duplicated, counts.lost) == (30, len(again), 0)
    expected_out_of_order = sum(1 for i, s in enumerate(order) if s < max(order[:i], default=-1))
    assert counts.out_of_order == expected_out_of_order

"""The stall detector on recorded progress series: where a stall begins and ends, how it ended, what counts."""

from kafkabench.core.liveness import Liveness, Sample, Stall, Track, against_faults, stalls, windows


def series(*points) -> list[Sample]:
    return [Sample(t, count, waiting) for t, count, waiting in points]


# a copier as the orchestrator saw it: committing every 0.5 s, silent from 2.0 s (SIGSTOP) with its partitions
# behind, replaced at 32.0 s; then its successor's series
COPIER = series((0.0, 0, True), (0.5, 100, True), (1.0, 200, True), (1.5, 300, True), (2.0, 400, True),
                *((2.0 + 0.5 * k, 400, True) for k in range(1, 61)))


def test_a_silent_process_with_work_waiting_stalls_from_its_last_progress_to_its_replacement():
    found = stalls(COPIER, end_s=32.0, how_ended="replaced")
    assert found == [Stall(2.0, 32.0, "replaced")]
    verdict = Liveness.of(found)
    assert verdict.longest.length_s == 30.0 and verdict.stalls == 1
    assert verdict.to_dict(origin_s=1.0) == {"longest_stall_s": 30.0, "stalls": 1, "began_s": 1.0, "ended_s": 31.0,
                                             "ended": "replaced"}


def test_a_stall_that_recovers_ends_at_the_look_that_saw_progress_again():
    found = stalls(series((0, 0, True), (1, 10, True), (2, 10, True), (3, 10, True), (4.5, 10, True), (5, 25, True),
                          (6, 30, True)))
    assert found == [Stall(1, 5, "recovered")]
    # no look in between: the stall is the time from the last growth to the look that saw growth again
    assert stalls(series((0, 0, True), (0.2, 5, True), (8.2, 6, True))) == [Stall(0.2, 8.2, "recovered")]


def test_no_work_waiting_is_no_stall_and_a_stall_begins_when_work_arrives():
    # idle (nothing behind) from 1 to 10: not a stall; work arrives at 10, nothing happens until 14
    found = stalls(series((0, 0, False), (1, 5, False), (5, 5, False), (10, 5, True), (12, 5, True), (14, 9, True)))
    assert found == [Stall(10, 14, "recovered")]


def test_partitions_taken_away_release_a_stall_and_a_stall_open_at_the_end_is_stuck():
    found = stalls(series((0, 0, True), (1, 3, True), (4, 3, True), (5, 3, False), (6, 3, True), (9, 3, True)))
    assert found == [Stall(1, 5, "released"), Stall(6, 9, "stuck")]


def test_short_pauses_between_looks_are_not_counted_as_stalls():
    assert stalls(series((0, 0, True), (0.4, 0, True), (0.6, 5, True), (1.2, 5, True), (1.5, 9, True), (2.5, 12, True))) == []
    assert Liveness.of([Stall(0.0, 0.8, "recovered")]) == Liveness(None, 0)
    assert Liveness.of([]).to_dict() == {"longest_stall_s": 0.0, "stalls": 0}


def test_the_track_knows_how_long_the_open_stall_has_lasted_as_it_goes():
    track = Track()
    track.note(0.0, waiting=True)
    track.note(0.2, count=50)
    track.note(0.5, waiting=True)
    assert track.stalled_for(0.5) == 0.3  # since the last growth, 0.2
    track.note(3.0, waiting=True)
    assert track.stalled_for(4.0) == 3.8
    track.note(4.2, count=60)
    assert abs(track.stalled_for(5.0) - 0.8) < 1e-9  # work still waits: the clock runs from the last growth
    track.note(5.0, waiting=False)
    assert track.stalled_for(9.0) == 0.0  # nothing waiting: no stall
    assert track.verdict(6.0, "exited").longest == Stall(0.2, 4.2, "recovered")


def test_a_stall_is_placed_against_the_last_fault_that_fired_before_it_ended():
    faults = [{"fault": "kill-coordinator", "broker": 2, "fired_s": 1.4, "healed_s": 3.4},
              {"fault": "kill-coordinator", "broker": 1, "fired_s": 12.2, "healed_s": None}]
    assert against_faults(0.2, 1.2, faults) == "before any fault"
    assert against_faults(0.5, 4.0, faults) == \
        "began 0.9 s before kill-coordinator of broker 2 fired at 1.4 s; ended 0.6 s after it healed"
    assert against_faults(1.6, 3.0, faults) == \
        "began 0.2 s after kill-coordinator of broker 2 fired at 1.4 s; ended 0.4 s before it healed"
    assert against_faults(5.0, 7.0, faults) == \
        "began 3.6 s after kill-coordinator of broker 2 fired at 1.4 s, 1.6 s after it healed"
    assert against_faults(13.0, 20.0, faults).endswith("which never healed")
    assert against_faults(12.21, 13.0, faults) == "began as kill-coordinator of broker 1 fired at 12.2 s, which never healed"


def test_fixed_windows_sum_what_each_process_did_and_a_replacement_counts_from_zero():
    first = [(0.1, 10), (0.9, 40), (1.5, 40), (2.2, 60)]  # killed after 2.2 s
    second = [(3.1, 5), (3.9, 30)]  # its successor, counting from 0
    assert windows([first, second], 1.0, 4.0) == [40, 0, 20, 30]
    assert windows([[(0.001, 10_000)]], 1.0, 3.0) == [10_000, 0, 0]  # a burst stays in its window

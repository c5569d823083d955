"""The availability probe's judgement from what the client was told, and which brokers go down."""

from kafkabench.labs.durability.availability import (
    ANSWER_GRACE_S, MIN_WATCH_S, GroupKey, Write, groups, judge, placement, role, roles_text, settled, taken_down)
from kafkabench.labs.durability.cells import Cell


def writes(start: float, stop: float, latency: float | None, error: str | None = None, every: float = 0.02) -> list[Write]:
    count = round((stop - start) / every)
    return [Write(start + i * every, None if latency is None else start + i * every + latency, error) for i in range(count)]


def test_a_follower_down_with_acks_all_stalls_until_the_isr_shrinks_then_writes_are_accepted():
    # the writes sent in the first 8 s wait for the paused follower, then all are answered at once
    held = [Write(t.sent_at, 8.0) for t in writes(0.0, 8.0, None)]
    history = held + writes(8.0, 12.0, 0.002)
    assert not settled(history, 0.0, 8.2, isr_settled=True, leaderless=False)  # just released: answered late
    assert settled(history, 0.0, 12.0, isr_settled=True, leaderless=False)
    found = judge(history, 0.0, 12.0)
    assert found["writes"] == "accepted" and found["refusal"] is None
    assert found["stall_s"] == 8.0
    assert found["acked"] == len(history) and found["unanswered"] == 0
    # liveness: nothing acknowledged for the 8 s the follower held the writes, then acknowledgements again
    assert found["liveness"] == {"longest_stall_s": 8.0, "stalls": 1, "began_s": 0.0, "ended_s": 8.0,
                                 "ended": "recovered"}


def test_refusals_are_named_with_how_fast_the_client_reports_them():
    history = writes(0.0, 10.0, 10.0 - 0.0, "REQUEST_TIMED_OUT")[:1] + writes(0.02, 10.0, None) + \
        writes(10.0, 13.0, 0.004, "NOT_ENOUGH_REPLICAS")
    found = judge(history, 0.0, 13.0)
    assert found["writes"] == "refused"
    assert found["refusal"] == "NOT_ENOUGH_REPLICAS"
    assert found["refused_in_ms"] == 4.0
    assert found["errors"] == {"REQUEST_TIMED_OUT": 1, "NOT_ENOUGH_REPLICAS": 150}
    assert found["liveness"]["longest_stall_s"] == 13.0 and found["liveness"]["ended"] == "stuck"  # refused: no ack


def test_writes_acknowledged_slowly_after_the_probe_stopped_are_judged_accepted_not_unanswered():
    # a loaded CI machine acknowledged acks=all writes 7-10 s late: at the watch's end (30 s) the last second's
    # writes had no answer yet, and the step was judged "no answer"; they are judged once answered (or timed out)
    history = writes(0.0, 30.0, None)
    for write in history[:-400]:
        write.answer(None, write.sent_at + 8.0)
    assert judge(history, 0.0, 30.0)["writes"] == "no answer"
    for write in history[-400:]:
        write.answer(None, write.sent_at + 8.0)
    found = judge(history, 0.0, 38.0, sent_until=30.0)
    assert found["writes"] == "accepted" and found["unanswered"] == 0 and found["stall_s"] == 8.0
    # writes still unanswered when the wait ended stay so
    assert judge(writes(0.0, 30.0, None), 0.0, 40.5, sent_until=30.0)["writes"] == "no answer"


class AnsweredWhileJudged(Write):
    """A write whose answer arrives on the client's thread just after the judge first looks at it."""

    @property
    def outcome(self) -> str | None:
        seen = super().outcome
        self.answer(None, self.sent_at + 0.001)
        return seen


def test_the_counts_add_up_when_an_answer_arrives_while_the_step_is_judged():
    # a CI run counted 417 acked and 0 unanswered of 418 sent: the write answered between the two counts was in neither
    history = writes(0.0, 3.0, 0.002) + [AnsweredWhileJudged(3.0)]
    found = judge(history, 0.0, 4.0)
    assert found["acked"] + found["unanswered"] + sum(found["errors"].values()) == found["sent"] == len(history)
    assert found["unanswered"] == 1  # as it stood when the judge took its snapshot


def test_nothing_settles_before_the_isr_has_stopped_waiting_for_the_brokers_down():
    history = writes(0.0, 20.0, 0.002)
    assert not settled(history, 0.0, 20.0, isr_settled=False, leaderless=False)
    assert not settled(history, 0.0, MIN_WATCH_S - 0.1, isr_settled=True, leaderless=False)


def test_a_partition_without_a_leader_settles_as_no_answer_once_nothing_was_answered_for_a_while():
    history = writes(-1.0, 0.0, 0.002) + writes(0.0, 9.0, None)
    assert not settled(history, 0.0, 9.0, isr_settled=False, leaderless=False)
    assert settled(history, 0.0, 9.0, isr_settled=False, leaderless=True)
    found = judge(history, 0.0, 9.0)
    assert found["writes"] == "no answer"
    assert found["acked"] == 0 and found["unanswered"] == found["sent"] == 450
    assert found["stall_s"] == 9.0  # the first write after the fault waited the whole watch


def test_different_answers_in_the_last_second_are_mixed_and_do_not_settle():
    history = writes(0.0, 6.0, 0.002)
    for i, write in enumerate(history):
        if i % 2:
            write.error = "NOT_LEADER_OR_FOLLOWER"
    assert not settled(history, 0.0, 6.0, isr_settled=True, leaderless=False)
    assert judge(history, 0.0, 6.0)["writes"] == "mixed"


def test_the_verdict_looks_at_writes_old_enough_to_have_been_answered():
    history = writes(0.0, 5.0, 0.002) + writes(5.0 - ANSWER_GRACE_S / 2, 5.0, None)
    assert judge(history, 0.0, 5.0)["writes"] == "accepted"


def test_one_fault_sequence_means_the_same_for_every_replication_factor():
    brokers = [1, 2, 3]
    assert taken_down(brokers) == [2, 3]
    assert placement(3, brokers) == [1, 2, 3]  # both taken down are followers; the leader stays
    assert placement(2, brokers) == [3, 2]  # the first is the follower, the second the leader
    assert placement(1, brokers) == [3]  # the first holds no replica, the second leads
    assert [role(b, [3, 2]) for b in (2, 3, 1)] == ["follower", "leader", "broker without a replica"]
    assert placement(4, [1, 2, 3, 4, 5]) == [1, 4, 5, 2]
    assert roles_text([(2, "follower"), (3, "follower")]) == "followers 2, 3"
    assert roles_text([(2, "follower"), (3, "leader")]) == "follower 2 and leader 3"
    assert roles_text([(2, "follower")]) == "follower 2"


def test_cells_group_by_replication_factor_min_insync_and_acks_in_their_order():
    def cell(rf, isr, acks, client="confluent", idem=False):
        return Cell("", 2, rf, isr, acks, idem, client)

    found = groups([cell(3, 2, "all"), cell(2, 1, "1"), cell(3, 2, "all", "java"), cell(3, 2, "all", idem=True)])
    assert list(found) == [GroupKey(3, 2, "all"), GroupKey(2, 1, "1")]
    assert len(found[GroupKey(3, 2, "all")]) == 3
    assert GroupKey(3, 2, "all").label == "rf3 isr2 acks=all"

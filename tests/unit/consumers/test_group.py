"""A consumer group's planned changes on stand-in workers (no broker, no process): a close waits for the member's own
finish and leaves its slot empty, never replaced by the watch; a restart starts the slot's next incarnation; a slot
past the group's size grows it; a member that never finishes is stopped within the bound."""

import queue

from kafkabench.consumers.group import ConsumerGroup
from kafkabench.core.protocol import Finish, Ready, Result, Start


class StandIn:
    """A worker that is ready at once and answers a finish with its result, unless told to hang."""

    def __init__(self, name: str, hangs: bool) -> None:
        self.name, self.hangs, self.placement, self.pid = name, hangs, {}, None
        self.messages: queue.Queue = queue.Queue()
        self.stopped = False

    def send(self, message) -> None:
        if isinstance(message, Finish) and not self.hangs:
            self.messages.put(Result(counters={"processed": 7}))

    def receive(self, kind, timeout_s: float):
        assert kind is Ready
        return Ready(client_version="stand-in")

    def next_message(self, timeout_s: float):
        try:
            return self.messages.get(timeout=timeout_s)
        except queue.Empty:
            return None

    def stop(self, grace_s: float) -> None:
        self.stopped = True


class Launcher:
    def __init__(self, hangs: set[str] = frozenset()) -> None:
        self.hangs, self.started = hangs, []

    def start(self, name: str, client: str) -> StandIn:
        self.started.append(StandIn(name, name in self.hangs))
        return self.started[-1]


def group(launcher: Launcher, size: int = 2) -> ConsumerGroup:
    return ConsumerGroup(launcher, "confluent", size, lambda slot, history: Start(), None, "test")


def test_a_restart_closes_the_member_cleanly_and_starts_the_slots_next_process():
    members = group(Launcher())
    members.start()
    said = members.restart(1)
    assert said == "consumer 1.1 closed, 1.2 started"
    first = members.members[0]
    assert first.ended == "finished" and first.closing and first.result.counters["processed"] == 7
    assert members.current[1].incarnation == 2 and members.current[1].ended is None
    members.check()  # the closed member ended by itself, on purpose: nobody replaces it
    assert len(members.members) == 3
    assert [text for _, text in members.events][-2:] == ["member 1.1 closed (finished)", "member 1.2 started"]


def test_a_close_leaves_the_slot_empty_and_a_slot_past_the_size_grows_the_group():
    members = group(Launcher())
    members.start()
    members.close(2)
    assert sorted(members.current) == [1]
    members.start_in(3)
    assert members.size == 3 and sorted(members.current) == [1, 3] and members.current[3].incarnation == 1


def test_a_member_that_does_not_finish_is_stopped_within_the_bound_and_says_so():
    launcher = Launcher(hangs={"test consumer 1.1"})
    members = group(launcher)
    members.start()
    members.close(1, timeout_s=0.2)
    hung = members.members[0]
    assert hung.ended == "stopped" and hung.error == "no result 0.2 s after finish" and launcher.started[0].stopped
    assert 1 not in members.current

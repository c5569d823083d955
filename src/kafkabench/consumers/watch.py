"""A consumer group watched from outside (the consumers or copiers of a delivery cell, the group of a groups cell):
every LOOK_S its committed offsets against the topic's end (a share group's backlog from its histories instead,
consumers.backlog), what is behind on each partition noted for the member that holds it (ConsumerGroup.look: a member
stalled past the bound is replaced) and members that ended by themselves replaced (ConsumerGroup.check)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from kafkabench.admin import GroupLag
from kafkabench.connection import Connection
from kafkabench.consumers.backlog import HistoryBacklog
from kafkabench.consumers.group import ConsumerGroup
from kafkabench.errors import KafkabenchError

# between two looks at the group's offsets (a committed-offsets fetch and an end-offset query per partition, sent to
# the brokers the measured clients use): a stalled member is replaced within a second of its bound
LOOK_S = 1.0
GIVE_UP_MARGIN_S = 30  # beyond the scenario's timeout and the stall bound: a group that commits nothing this long


class GroupWatch:
    """A thread that looks at the group's committed offsets against the input's end every LOOK_S, from the group's
    start to its finish: each look noted for the members (ConsumerGroup.look) and members that ended replaced
    (ConsumerGroup.check). A look that fails (a broker down) is not taken for one: the members are looked at without
    what is behind (their silence still counts, nobody is replaced on old figures), and the next look asks with a
    fresh client: the client never subscribes, and after a broker's kill its metadata can stay stale, every end-offset
    query failing with "Unknown partition" or "Not leader for partition" until it is replaced."""

    def __init__(self, members: ConsumerGroup, connection: Connection, group: str, topic: str, partitions: int,
                 backlog: Callable[[int], HistoryBacklog] | None = None) -> None:
        self.members, self.connection, self.group, self.topic, self.partitions = members, connection, group, topic, \
            partitions
        self.backlog = backlog  # a share group's: what is behind from the histories (it commits no offsets)
        self.more: list[tuple[str, int]] = []  # topics the group reads besides `topic` (follow), with their partitions
        self.behind: dict[int, int] | None = None  # as the last look that succeeded saw it ...
        self.looked_at = 0.0  # ... which began then
        self.committed_at = time.monotonic()  # the last look that saw the group commit more
        self.problem = ""
        self.looks: list[tuple[float, int]] = []  # (monotonic, records behind in all) of every look that succeeded
        self._stop, self._grown = threading.Event(), threading.Event()
        self._thread = threading.Thread(target=self._run, name="group watch", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread.ident is not None:
            self._thread.join(60)

    def grow(self, partitions: int) -> None:
        """The topic has `partitions` now: the next look asks for every one of them."""
        self.partitions = partitions
        self._grown.set()

    def follow(self, topic: str, partitions: int) -> None:
        """The group reads `topic` too (a subscription's pattern matched it): the next look asks for its partitions,
        numbered on after the others' (as the members number them)."""
        self.more.append((topic, partitions))
        self._grown.set()

    def until_caught_up(self, give_up_s: float) -> float | None:
        """Seconds from now until the group has committed the whole input (None: it committed nothing for
        `give_up_s`, no look succeeded that long, or the watch ended)."""
        begun = time.monotonic()
        while not self._stop.wait(LOOK_S):
            now = time.monotonic()
            if self.looked_at > begun and not any(self.behind.values()):
                return round(now - begun, 3)
            if now - max(self.looked_at, begun) > give_up_s:
                self.problem = f"no look at the group's offsets succeeded for {give_up_s:g} s: {self.problem}"
                return None
            if now - self.committed_at > give_up_s:
                left = ", ".join(f"[{p}] {n:,} behind" for p, n in sorted((self.behind or {}).items()) if n)
                self.problem = f"nothing committed for {give_up_s:g} s with {left or 'the offsets unknown'}"
                if (why := self._unstable()) is not None:
                    self.problem += f"; {why}"
                return None
        return None

    def _unstable(self) -> str | None:
        try:
            with self._lag() as lag:
                return lag.unstable()
        except KafkabenchError as exc:
            return str(exc)

    def _lag(self) -> GroupLag | HistoryBacklog:
        if self.backlog is not None:
            return self.backlog(self.partitions)
        return GroupLag(self.connection, self.group, self.topic, self.partitions, more=self.more)

    def _run(self) -> None:
        lag, left = self._lag(), -1  # left: records behind in all; once the input is written, only commits lower it
        try:
            while not self._stop.wait(LOOK_S):
                if self._grown.is_set():  # more partitions to look at: asked of a client that knows them
                    self._grown.clear()
                    _close_aside(lag)
                    lag = self._lag()
                looked_at = time.monotonic()
                try:
                    behind = lag.behind()
                except KafkabenchError as exc:
                    self.problem, behind = str(exc), None
                    _close_aside(lag)
                    lag = self._lag()
                if behind is not None:
                    if sum(behind.values()) != left:
                        left, self.committed_at = sum(behind.values()), time.monotonic()
                    self.behind, self.looked_at = behind, looked_at
                    self.looks.append((looked_at, sum(behind.values())))
                try:
                    self.members.look(behind)
                    self.members.check()
                except KafkabenchError as exc:  # a replacement that could not start: the next look tries again
                    self.problem = str(exc)
        finally:
            _close_aside(lag)


def _close_aside(lag: GroupLag) -> None:
    """Closed on a thread of its own: a client stuck on a coordinator that is gone may take its time to close."""
    threading.Thread(target=lag.close, name="group lag close", daemon=True).start()

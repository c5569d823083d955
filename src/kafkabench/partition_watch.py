"""A topic's partitions watched while a run goes on: every LOOK_S the cluster's metadata says each partition's
leader and in-sync replicas, and `spans` turns the looks into the time each partition had no leader and the time it
had fewer in-sync replicas than min.insync.replicas (writes with acks=all refused).

The metadata alone is late: a killed leader stays the leader, and in the ISR, until the controller fences it (its
session times out, broker.session.timeout.ms, 9 s by default) or it is back, and all that time nobody can write to
its partitions. So a broker the run itself took down (`down`: killed or paused by a fault or an operation and not
yet serving again) counts as no leader where the metadata still names it, and only the other replicas count as in
sync. Which brokers are down is the run's own record, never a look at the processes: a status read of a process can
be wrong for a moment on a loaded machine, and one such read made partitions "leaderless" in a run of the
operations plan. Network faults are not seen here: a leader cut off from the clients still leads.

A span runs from the first look that saw the partition so until the first look that did not (or the last look): a
span shorter than LOOK_S can fall between two looks and go unseen, and each span's ends are known to within LOOK_S.
A look that failed (no broker answered in time) is a gap in the series, never taken for a state. Under load the
looks are answered late or not at all while a broker restarts, so a kill's span would fall into such a gap; the run
says when it took each broker down (`Downs`), and that moment counts as a look: the partitions the broker led at the
last look before it have no leader from then until a look sees one."""

from __future__ import annotations

import threading
from collections.abc import Callable

from kafkabench.admin import KafkaAdmin
from kafkabench.connection import Connection
from kafkabench.errors import KafkabenchError

LOOK_S = 0.2
ADMIN_TIMEOUT_S = 5.0

State = tuple[int | None, frozenset[int]]  # a partition's leader (None: none that can serve) and in-sync replicas
Look = tuple[float, dict[int, State]]  # (seconds, partition -> state)
DownSpan = tuple[int, float, float | None]  # (broker, down from, serving again from; None: to the end)


class Downs:
    """The brokers a fault or operation has taken down (killed or paused, not serving again yet), and when: what
    `PartitionWatch` counts as unable to lead, and `spans` as a look at the moment each went down."""

    def __init__(self, clock: Callable[[], float]) -> None:
        self.clock = clock
        self.spans: list[list] = []  # [broker, from_s, to_s or None], in the order they went down

    def add(self, broker: int) -> None:
        if broker not in self.now():
            self.spans.append([broker, round(self.clock(), 3), None])

    def discard(self, broker: int | None) -> None:
        for span in self.spans:
            if span[0] == broker and span[2] is None:
                span[2] = round(self.clock(), 3)

    def now(self) -> set[int]:
        return {broker for broker, _, to in list(self.spans) if to is None}


class PartitionWatch:
    """A thread describing `topic` every LOOK_S from `start` to `stop`; `clock` gives the run's seconds."""

    def __init__(self, connection: str | Connection, topic: str, clock: Callable[[], float],
                 down: Callable[[], set[int]] = set) -> None:
        self.connection, self.topic, self.clock, self.down = connection, topic, clock, down
        self.looks: list[Look] = []
        self.failed = 0  # looks that got no answer
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="partition watch", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> list[Look]:
        self._stop.set()
        if self._thread.ident is not None:
            self._thread.join(2 * ADMIN_TIMEOUT_S + 5)
        return self.looks

    def _run(self) -> None:
        with KafkaAdmin(self.connection, timeout_s=ADMIN_TIMEOUT_S) as admin:
            while not self._stop.wait(LOOK_S):
                try:
                    partitions = admin.describe_topic(self.topic).partitions
                except KafkabenchError:
                    self.failed += 1
                    continue
                self.looks.append((round(self.clock(), 3), _states(partitions, self.down())))


def _states(partitions, down: set[int]) -> dict[int, State]:
    """Per partition: its leader (None: none, or one the run took down) and its in-sync replicas that can serve."""
    def serving(broker: int | None) -> bool:
        return broker is not None and broker >= 0 and broker not in down

    return {p.partition: (p.leader if serving(p.leader) else None,
                          frozenset(replica for replica in p.isr if serving(replica))) for p in partitions}


def spans(looks: list[Look], min_isr: int, downs: list[DownSpan] = ()) -> dict[int, dict]:
    """Per partition: its spans without a leader and under min.insync.replicas, [from_s, to_s] each, and their
    totals in seconds. Each of `downs` counts as a look at its start: the last look's states without that broker."""
    found: dict[int, dict] = {}
    opened: dict[tuple[int, str], float] = {}
    for at, partitions in _with_downs(looks, downs):
        for partition, (leader, in_sync) in partitions.items():
            figures = found.setdefault(partition, {"leaderless": [], "under_min_isr": []})
            for name, bad in (("leaderless", leader is None or leader < 0), ("under_min_isr", len(in_sync) < min_isr)):
                key = (partition, name)
                if bad and key not in opened:
                    opened[key] = at
                elif not bad and key in opened:
                    figures[name].append([opened.pop(key), at])
    last = looks[-1][0] if looks else 0.0
    for (partition, name), began in opened.items():
        found[partition][name].append([began, last])
    for figures in found.values():
        for name in ("leaderless", "under_min_isr"):
            figures[f"{name}_s"] = round(sum(to - begun for begun, to in figures[name]), 3)
    return found


def _with_downs(looks: list[Look], downs: list[DownSpan]) -> list[Look]:
    """The looks, and at each broker's going down a look of its own: the states the last look before it saw, less
    that broker (its partitions leaderless, it out of their ISRs); a down before the first look adds none."""
    merged: list[Look] = []
    pending = sorted((from_s, broker) for broker, from_s, _ in downs)
    for look in looks:
        while pending and pending[0][0] <= look[0]:
            from_s, broker = pending.pop(0)
            if merged:
                merged.append((from_s, {partition: (None if leader == broker else leader, in_sync - {broker})
                                        for partition, (leader, in_sync) in merged[-1][1].items()}))
        merged.append(look)
    return merged

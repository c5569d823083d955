"""A topic's partitions watched while a run goes on: every LOOK_S the cluster's metadata says each partition's
leader and in-sync replicas, and `spans` turns the looks into the time each partition had no leader and the time it
had fewer in-sync replicas than min.insync.replicas (writes with acks=all refused).

The metadata alone is late: a killed leader stays the leader, and in the ISR, until the controller fences it (its
session times out, broker.session.timeout.ms, 9 s by default) or it is back, and all that time nobody can write to
its partitions. So where the run knows which brokers can serve (`live`: on the embedded cluster, those whose process
runs and that no fault or operation has killed or paused and not yet brought back), a leader that cannot counts as
no leader, and only replicas that can count as in sync. Network faults are not seen here: a leader cut off from the
clients still leads.

A span runs from the first look that saw the partition so until the first look that did not (or the last look): a
span shorter than LOOK_S can fall between two looks and go unseen, and each span's ends are known to within LOOK_S.
A look that failed (no broker answered in time) is a gap in the series, never taken for a state."""

from __future__ import annotations

import threading
from collections.abc import Callable

from kafkabench.admin import KafkaAdmin
from kafkabench.connection import Connection
from kafkabench.errors import KafkabenchError

LOOK_S = 0.2
ADMIN_TIMEOUT_S = 5.0

Look = tuple[float, dict[int, tuple[int | None, int]]]  # (seconds, partition -> (leader, in-sync replicas))


class PartitionWatch:
    """A thread describing `topic` every LOOK_S from `start` to `stop`; `clock` gives the run's seconds."""

    def __init__(self, connection: str | Connection, topic: str, clock: Callable[[], float],
                 live: Callable[[], set[int] | None] = lambda: None) -> None:
        self.connection, self.topic, self.clock, self.live = connection, topic, clock, live
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
                self.looks.append((round(self.clock(), 3), _states(partitions, self.live())))


def _states(partitions, live: set[int] | None) -> dict[int, tuple[int | None, int]]:
    """Per partition: its leader (None: none, or one whose process is not running) and its running in-sync
    replicas; `live` None: every broker the metadata names counts as running."""
    def running(broker: int | None) -> bool:
        return broker is not None and broker >= 0 and (live is None or broker in live)

    return {p.partition: (p.leader if running(p.leader) else None, sum(running(replica) for replica in p.isr))
            for p in partitions}


def spans(looks: list[Look], min_isr: int) -> dict[int, dict]:
    """Per partition: its spans without a leader and under min.insync.replicas, [from_s, to_s] each, and their
    totals in seconds."""
    found: dict[int, dict] = {}
    opened: dict[tuple[int, str], float] = {}
    for at, partitions in looks:
        for partition, (leader, in_sync) in partitions.items():
            figures = found.setdefault(partition, {"leaderless": [], "under_min_isr": []})
            for name, bad in (("leaderless", leader is None or leader < 0), ("under_min_isr", in_sync < min_isr)):
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

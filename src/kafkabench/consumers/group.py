"""A consumer group as the orchestrator runs it (a delivery cell's consumers or copiers, a groups cell's members): `size`
members, each a worker process in a slot of its own, killed, paused and replaced as the faults say, or restarted,
added and closed as a planned change says, until the group has committed the whole input.

A member killed on purpose (SIGKILL) stays down until its fault heals, then a new process takes its slot: a new
history directory (`consumer-2.1`: slot 2, second process), the same transactional.id for a copier, so it fences
whatever its predecessor left open. A member that ends by itself (a copier fenced after a pause) is replaced at
once; one that makes no progress for the stall bound while records wait on the partitions it holds is stopped
(SIGKILL) and replaced too: a stalled client is that client's result, and the cell goes on. At most `REPLACEMENTS`
replacements per cell; past that, a member is left as it is. Every process's end is recorded in `events`, and each
one's progress in its `track` (core.liveness).
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from kafkabench.core.liveness import Track
from kafkabench.core.protocol import Finish, Progress, Ready, Result, Start, Task
from kafkabench.core.worker_process import WorkerFailed
from kafkabench.errors import KafkabenchError

WORKER_START_S = 120
SILENT_S = 2.0  # a member that has said nothing this long (its reports come every 0.2 s) is not working
REPLACEMENTS = 20  # members that ended by themselves or stalled: past this many, a member is left as it is
FINISH_S = 60  # a member told to finish: how long its last transaction and close may take


@dataclass
class Member:
    """One process in a slot: what it reported, and how it ended."""

    slot: int
    incarnation: int
    name: str
    history_dir: Path | None
    worker: object = None
    processed: int = 0
    committed: int = 0
    result: Result | None = None
    error: str | None = None
    ended: str | None = None  # "killed", "finished", "replaced" (stalled), or why it ended by itself
    closing: bool = False  # told to finish by a planned change: its end is not a failure to replace
    paused: bool = False
    placement: dict = field(default_factory=dict)
    assigned: list[int] = field(default_factory=list)  # the partitions it last said it holds
    calling: str = ""  # the client call it last said it was in, and for how long
    track: Track = field(default_factory=Track)  # its progress: processed + committed, and whether work waited
    progress: list[tuple[float, int, int]] = field(default_factory=list)  # (monotonic, processed, committed)
    ended_at: float | None = None
    heard_at: float = 0.0  # monotonic: its last report

    def to_dict(self) -> dict:
        return {"member": f"{self.slot}.{self.incarnation}", "name": self.name, **self.placement,
                "counters": {"processed": self.processed, "committed": self.committed,
                             **(self.result.counters if self.result else {})},
                "ended": self.ended, **({"error": self.error} if self.error else {})}


class ConsumerGroup:
    """`size` slots of `task_for(slot, history_dir)` workers; `kill`, `pause`, `resume` and `replace` are the faults'
    way in (the `Members` seam of labs.delivery.faults)."""

    def __init__(self, launcher, client: str, size: int, task_for: Callable[[int, Path | None], Task],
                 history_root: Path | None, label: str, stall_bound_s: float | None = None) -> None:
        self.launcher, self.client, self.size, self.task_for = launcher, client, size, task_for
        self.history_root, self.label, self.stall_bound_s = history_root, label, stall_bound_s
        self.members: list[Member] = []
        self.current: dict[int, Member] = {}  # slot -> its live process
        self.events: list[tuple[float, str]] = []  # (monotonic time, what happened)
        self._lock = threading.Lock()
        self._replaced = 0
        self._paused: dict[int, Member] = {}  # slot -> the member a pause stopped
        self._left: list[Member] = []  # members past REPLACEMENTS, left as they are

    # ---- the group's life ---------------------------------------------------------------------------------

    def start(self) -> None:
        """Every slot's first process started and ready, then all told to go together."""
        members = [self._launch(slot) for slot in range(1, self.size + 1)]
        for member in members:
            self._ready(member)
        for member in members:
            self._go(member)

    def check(self) -> None:
        """Between looks at the group's offsets: a member that ended by itself is recorded and replaced."""
        for slot, member in list(self.current.items()):
            if member.ended is not None and member.ended not in ("killed", "replaced") and not member.closing:
                self._replace_if(slot, member, f"ended by itself ({member.ended})")

    def look(self, behind: dict[int, int] | None) -> None:
        """What is waiting on each partition (records behind the group's committed offset) noted for each live member
        by the partitions it holds; a member stalled past the bound is stopped and replaced. A member silent for
        SILENT_S (stopped, or blocked where it cannot report) has work waiting while it held partitions when last
        heard of, even once the group has given them to another member: it is stuck, and may come back a zombie.
        `behind` None: the look failed; silence is noted, nothing else changes, and nobody is replaced."""
        now = time.monotonic()
        for slot, member in list(self.current.items()):
            if member.ended is not None:
                continue
            waiting = {p: behind[p] for p in member.assigned if behind.get(p, 0) > 0} if behind is not None else {}
            silent = now - member.heard_at > SILENT_S and bool(member.assigned)
            member.track.note(now, waiting=bool(waiting) or silent if behind is not None else (True if silent else None))
            stalled = member.track.stalled_for(now)
            if self.stall_bound_s is not None and stalled > self.stall_bound_s and behind is not None:
                left = ", ".join(f"[{p}] {n:,} behind" for p, n in sorted(waiting.items())) or \
                    f"partitions {', '.join(map(str, member.assigned))} held"
                where = f"; last seen in {member.calling}" if member.calling else \
                    f"; silent for {now - member.heard_at:.1f} s" if silent else ""
                self._replace_if(slot, member, f"made no progress for {stalled:.1f} s with {left}{where}", stop=True)

    def _replace_if(self, slot: int, member: Member, why: str, stop: bool = False) -> None:
        with self._lock:
            if self.current.get(slot) is not member or (member.ended is not None and stop):
                return
            if self._replaced >= REPLACEMENTS:
                if member not in self._left:
                    self._left.append(member)
                    self._event(f"member {slot}.{member.incarnation} {why}; not replaced: {REPLACEMENTS} replacements "
                                "already")
                return
            self._replaced += 1
            if stop:
                member.ended, member.ended_at = "replaced", time.monotonic()
                with contextlib.suppress(KafkabenchError):  # gone already: it is replaced all the same
                    self._signal(member, signal.SIGKILL)
                member.worker.stop(0)
            self._event(f"member {slot}.{member.incarnation} {why}; replaced")
            self._replace(slot)

    def finish(self) -> None:
        """Every live member told to finish (its last commit or transaction done) and its result awaited, within
        FINISH_S; one without a result by then has that as its error."""
        with self._lock:  # no replacement half-started
            live = [member for member in self.current.values() if member.ended is None]
        for member in live:
            try:
                member.worker.send(Finish())
            except WorkerFailed as failed:
                member.error = member.error or failed.reason
        deadline = time.monotonic() + FINISH_S
        for member in live:
            while member.ended is None and time.monotonic() < deadline:
                time.sleep(0.05)
            if member.ended is None:
                member.error = member.error or f"no result {FINISH_S} s after finish"

    def stop(self) -> None:
        """Every process gone, whatever state the group is in."""
        for member in self.members:
            if member.worker is not None:
                if member.paused:
                    with contextlib.suppress(KafkabenchError):  # gone already: nothing to resume
                        self._signal(member, signal.SIGCONT)
                member.worker.stop(10)

    # ---- planned changes ---------------------------------------------------------------------------------------

    def close(self, slot: int, timeout_s: float = FINISH_S) -> str:
        """The member told to finish and awaited (its last commit, then its client closed: it leaves the group), its
        slot left empty; a member that has not ended within `timeout_s` is stopped."""
        with self._lock:
            member = self._live(slot)
            member.closing = True
        member.worker.send(Finish())
        deadline = time.monotonic() + timeout_s
        while member.ended is None and time.monotonic() < deadline:
            time.sleep(0.02)
        if member.ended is None:
            member.error = f"no result {timeout_s:g} s after finish"
            member.ended, member.ended_at = "stopped", time.monotonic()
            member.worker.stop(0)
        with self._lock:
            self.current.pop(slot, None)
        self._event(f"member {slot}.{member.incarnation} closed ({member.ended})")
        return f"consumer {slot}.{member.incarnation} closed"

    def restart(self, slot: int) -> str:
        """A deploy's step: the member closed cleanly, then a new process in its slot."""
        said = self.close(slot)
        self.start_in(slot)
        return f"{said}, {slot}.{self.current[slot].incarnation} started"

    def start_in(self, slot: int) -> None:
        """A new process in `slot` (an emptied one, or one past the group's size: the group grows)."""
        with self._lock:
            self.size = max(self.size, slot)
            self._replace(slot)
        self._event(f"member {slot}.{self.current[slot].incarnation} started")

    # ---- the faults' way in -------------------------------------------------------------------------------

    def aim(self, turn: int) -> int:
        """The slot a consumer fault hits on its `turn` (0, 1, ...): slots in turn."""
        return turn % self.size + 1

    def kill(self, slot: int) -> str:
        with self._lock:
            member = self._live(slot)
            member.ended, member.ended_at = "killed", time.monotonic()
            self._signal(member, signal.SIGKILL)
        self._event(f"member {slot}.{member.incarnation} killed (kill -9)")
        return f"consumer {slot}.{member.incarnation} killed (kill -9)"

    def replace(self, slot: int) -> None:
        """A killed member's slot taken by a new process."""
        with self._lock:
            self._replace(slot)
        self._event(f"member {slot}.{self.current[slot].incarnation} started in its place")

    def pause(self, slot: int) -> str:
        with self._lock:
            member = self._live(slot)
            self._signal(member, signal.SIGSTOP)
            member.paused = True
            self._paused[slot] = member
        self._event(f"member {slot}.{member.incarnation} paused (SIGSTOP)")
        return f"consumer {slot}.{member.incarnation} paused (SIGSTOP)"

    def resume(self, slot: int) -> None:
        with self._lock:
            member = self._paused.pop(slot)
            if member.ended is not None:
                self._event(f"member {slot}.{member.incarnation} not resumed: {member.ended} meanwhile")
                return
            self._signal(member, signal.SIGCONT)
            member.paused = False
        self._event(f"member {slot}.{member.incarnation} resumed")

    # ---- inside -------------------------------------------------------------------------------------------

    def _live(self, slot: int) -> Member:
        member = self.current.get(slot)
        if member is None or member.ended is not None:
            raise KafkabenchError(f"consumer {slot} has no running process to hit")
        return member

    def _signal(self, member: Member, signum: int) -> None:
        pid = getattr(member.worker, "pid", None)
        if pid is None:
            raise KafkabenchError(f"consumer faults signal local processes; {member.name} runs elsewhere")
        try:
            os.kill(pid, signum)
        except ProcessLookupError as exc:
            raise KafkabenchError(f"{member.name} (pid {pid}) is gone") from exc

    def _replace(self, slot: int) -> None:
        """A new process in the slot; one that fails to start (its client refused, say, while a broker is down) ends
        with why, and the next check replaces it in turn."""
        member = self._launch(slot)
        try:
            self._ready(member)
        except WorkerFailed as failed:
            member.error = failed.reason
            member.ended, member.ended_at = failed.reason, time.monotonic()
            return
        self._go(member)

    def _launch(self, slot: int) -> Member:
        incarnation = 1 + sum(1 for member in self.members if member.slot == slot)
        name = f"{self.label} consumer {slot}.{incarnation}"
        history_dir = self.history_root / f"consumer-{slot}.{incarnation}" if self.history_root else None
        member = Member(slot, incarnation, name, history_dir)
        member.worker = self.launcher.start(name, self.client)
        self.members.append(member)
        self.current[slot] = member
        member.worker.send(self.task_for(slot, history_dir))
        return member

    def _ready(self, member: Member) -> None:
        member.worker.receive(Ready, timeout_s=WORKER_START_S)
        member.placement = dict(member.worker.placement)

    def _go(self, member: Member) -> None:
        member.heard_at = time.monotonic()
        member.worker.send(Start())
        threading.Thread(target=self._follow, args=(member,), name=f"follow {member.name}", daemon=True).start()

    def _follow(self, member: Member) -> None:
        """The member's progress until its result or its end."""
        try:
            while member.ended is None:
                message = member.worker.next_message(0.2)
                if isinstance(message, Progress):
                    self._progressed(member, message)
                elif isinstance(message, Result):
                    member.result = message
                    member.processed = message.counters.get("processed", member.processed)
                    member.ended, member.ended_at = "finished", time.monotonic()
        except WorkerFailed as failed:
            if member.ended not in ("killed", "replaced"):
                member.error = failed.reason
                if failed.partial is not None:
                    member.result = Result(**failed.partial.model_dump())
                member.ended, member.ended_at = failed.reason, time.monotonic()

    @staticmethod
    def _progressed(member: Member, message: Progress) -> None:
        now = time.monotonic()
        member.processed, member.committed, member.heard_at = message.done, message.acked or 0, now
        if message.assigned is not None:
            member.assigned = message.assigned
        member.calling = f"{message.calling} for {message.calling_s:.1f} s" if message.calling else ""
        member.progress.append((now, member.processed, member.committed))
        member.track.note(now, count=member.processed + member.committed)

    def _event(self, text: str) -> None:
        self.events.append((time.monotonic(), text))

    def said(self, since: float) -> list[str]:
        """The events in words, in seconds from `since` (a monotonic time: the run's start, as its faults count)."""
        return [f"{at - since:.1f} s: {text}" for at, text in self.events]

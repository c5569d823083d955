"""The consumers (or copiers) of a delivery cell as the orchestrator runs them: a consumer group of `size` members,
each a worker process in a slot of its own, killed, paused and replaced as the faults say, until the group has
committed the whole input.

A member killed on purpose (SIGKILL) stays down until its fault heals, then a new process takes its slot: a new
history directory (`consumer-2.1`: slot 2, second process), the same transactional.id for a copier, so it fences
whatever its predecessor left open. A member that ends by itself (a copier fenced after a pause) is replaced at
once, at most `REPLACEMENTS` times per cell. Every process's end is recorded in `events`.
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

from kafkabench.core.protocol import Finish, Progress, Ready, Result, Start, Task
from kafkabench.core.worker_process import WorkerFailed
from kafkabench.errors import KafkabenchError

WORKER_START_S = 120
REPLACEMENTS = 20  # members that end by themselves: more than this many replacements ends the cell
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
    ended: str | None = None  # "killed", "finished", or why it ended by itself
    paused: bool = False
    placement: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        return {"member": f"{self.slot}.{self.incarnation}", "name": self.name, **self.placement,
                "counters": {"processed": self.processed, "committed": self.committed,
                             **(self.result.counters if self.result else {})},
                "ended": self.ended, **({"error": self.error} if self.error else {})}


class ConsumerGroup:
    """`size` slots of `task_for(slot, history_dir)` workers; `kill`, `pause`, `resume` and `replace` are the faults'
    way in (the `Members` seam of labs.delivery.faults)."""

    def __init__(self, launcher, client: str, size: int, task_for: Callable[[int, Path | None], Task],
                 history_root: Path | None, label: str) -> None:
        self.launcher, self.client, self.size, self.task_for = launcher, client, size, task_for
        self.history_root, self.label = history_root, label
        self.members: list[Member] = []
        self.current: dict[int, Member] = {}  # slot -> its live process
        self.events: list[tuple[float, str]] = []  # (monotonic time, what happened)
        self._lock = threading.Lock()
        self._replaced = 0

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
            if member.ended is not None and member.ended != "killed":
                with self._lock:
                    if self.current.get(slot) is not member:
                        continue
                    self._replaced += 1
                    if self._replaced > REPLACEMENTS:
                        raise KafkabenchError(f"{self.label}: members ended by themselves {self._replaced} times; "
                                              f"the last: {member.ended}")
                    self._event(f"member {slot}.{member.incarnation} ended by itself ({member.ended}); replaced")
                    self._replace(slot)

    def finish(self) -> None:
        """Every live member told to finish (its last commit or transaction done) and its result awaited, within
        FINISH_S; one without a result by then has that as its error."""
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

    # ---- the faults' way in -------------------------------------------------------------------------------

    def aim(self, turn: int) -> int:
        """The slot a consumer fault hits on its `turn` (0, 1, ...): slots in turn."""
        return turn % self.size + 1

    def kill(self, slot: int) -> str:
        with self._lock:
            member = self._live(slot)
            member.ended = "killed"
            self._signal(member, signal.SIGKILL)
        self._event(f"member {slot}.{member.incarnation} killed (kill -9)")
        return f"consumer {slot}.{member.incarnation} killed (kill -9)"

    def replace(self, slot: int) -> None:
        """A killed member's slot taken by a new process."""
        with self._lock:
            self._replace(slot)
        self._event(f"member {slot}.{self.current[slot].incarnation} started in its place")

    def pause(self, slot: int) -> str:
        member = self._live(slot)
        self._signal(member, signal.SIGSTOP)
        member.paused = True
        self._event(f"member {slot}.{member.incarnation} paused (SIGSTOP)")
        return f"consumer {slot}.{member.incarnation} paused (SIGSTOP)"

    def resume(self, slot: int) -> None:
        member = self.current[slot]
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
        member = self._launch(slot)
        self._ready(member)
        self._go(member)

    def _launch(self, slot: int) -> Member:
        incarnation = 1 + sum(1 for member in self.members if member.slot == slot)
        name = f"{self.label} consumer {slot}.{incarnation}"
        history_dir = self.history_root / f"consumer-{slot}.{incarnation}" if self.history_root else None
        member = Member(slot, incarnation, name, history_dir)
        self.members.append(member)
        self.current[slot] = member
        member.worker = self.launcher.start(name, self.client)
        member.worker.send(self.task_for(slot, history_dir))
        return member

    def _ready(self, member: Member) -> None:
        member.worker.receive(Ready, timeout_s=WORKER_START_S)
        member.placement = dict(member.worker.placement)

    def _go(self, member: Member) -> None:
        member.worker.send(Start())
        threading.Thread(target=self._follow, args=(member,), name=f"follow {member.name}", daemon=True).start()

    def _follow(self, member: Member) -> None:
        """The member's progress until its result or its end."""
        try:
            while member.ended is None:
                message = member.worker.next_message(0.2)
                if isinstance(message, Progress):
                    member.processed, member.committed = message.done, message.acked or 0
                elif isinstance(message, Result):
                    member.result = message
                    member.processed = message.counters.get("processed", member.processed)
                    member.ended = "finished"
        except WorkerFailed as failed:
            if member.ended != "killed":
                member.error = failed.reason
                if failed.partial is not None:
                    member.result = Result(**failed.partial.model_dump())
                member.ended = failed.reason

    def _event(self, text: str) -> None:
        self.events.append((time.monotonic(), text))

    def said(self, since: float) -> list[str]:
        """The events in words, in seconds from `since` (a monotonic time: the run's start, as its faults count)."""
        return [f"{at - since:.1f} s: {text}" for at, text in self.events]

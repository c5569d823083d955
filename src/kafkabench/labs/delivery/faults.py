"""Broker faults during a delivery run: a thread that fires each fault at its time, heals it, and records both.

The first fault fires `at_s` seconds after the start, or once the producer has sent `after` messages; then one
every `every_s` seconds, `bounces` in all, the given faults taking turns (kill, pause, kill, ...). A kill or a
pause lasts its own seconds (default DOWN_S) and then heals (the broker restarted, or resumed); a clean
restart heals when the broker serves again. Each fault's victim is looked up when it fires: the leader of the
topic's partition 0, a follower of it, or a KRaft controller. Faults go through the `Faults` seam only, so an
external cluster refuses them in one line.

Stopping the thread (the producer finished) heals a fault that is still down at once; bounces not yet fired
are recorded as such, never silently dropped.
"""

from __future__ import annotations

import threading
import time
from dataclasses import asdict, dataclass
from typing import Callable

from kafkabench.admin import KafkaAdmin
from kafkabench.cluster.faults import Faults
from kafkabench.connection import Connection
from kafkabench.errors import KafkabenchError
from kafkabench.labs.delivery.scenario import DeliveryScenario

DOWN_S = 3.0
JOIN_S = 180.0  # a heal in progress (a restart) may take this long


@dataclass(frozen=True)
class FaultSpec:
    kind: str  # kill-leader, pause-leader, restart-leader, kill-follower, kill-controller
    down_s: float | None  # None for a clean restart

    @classmethod
    def parse(cls, text: str) -> FaultSpec:
        kind, _, seconds = text.partition(":")
        return cls(kind, None if kind == "restart-leader" else float(seconds) if seconds else DOWN_S)

    @property
    def action(self) -> str:
        return self.kind.split("-", 1)[0]

    @property
    def role(self) -> str:
        return self.kind.split("-", 1)[1]


@dataclass
class FaultEvent:
    """One fault as it happened, in seconds since the run's start."""

    fault: str
    planned_s: float | None  # None until the count trigger fired
    broker: int | None = None
    fired_s: float | None = None
    healed_s: float | None = None
    error: str | None = None

    def to_dict(self) -> dict:
        return asdict(self)


class FaultRun:
    def __init__(self, specs: list[FaultSpec], faults: Faults, bootstrap: str | Connection, topic: str, *, bounces: int,
                 every_s: float, at_s: float = 0.0, after: int | None = None,
                 sent: Callable[[], int] = lambda: 0) -> None:
        self.specs, self.faults, self.bootstrap, self.topic = specs, faults, bootstrap, topic
        self.bounces, self.every_s, self.at_s, self.after, self.sent = bounces, every_s, at_s, after, sent
        self.events: list[FaultEvent] = []
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._start = 0.0

    @classmethod
    def of(cls, scenario: DeliveryScenario, faults: Faults, bootstrap: str | Connection, topic: str) -> FaultRun:
        """The scenario's faults (none: a run that fires nothing) on `topic`."""
        return cls([FaultSpec.parse(text) for text in scenario.faults], faults, bootstrap, topic,
                   bounces=scenario.bounces, every_s=scenario.bounce_every, at_s=scenario.fault_at,
                   after=scenario.fault_after)

    def start(self) -> None:
        if not self.specs:
            return
        self._start = time.monotonic()
        self._thread = threading.Thread(target=self._run, name="kafkabench-faults", daemon=True)
        self._thread.start()

    def stop(self) -> list[FaultEvent]:
        """End the faults: one that is down heals now; the events as they happened, unfired ones marked."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(JOIN_S)
            if self._thread.is_alive():
                self.events.append(FaultEvent("heal", None, error=f"a heal was still running after {JOIN_S:g} s"))
        fired = len([event for event in self.events if event.fault != "heal"])
        for index in range(fired, self.bounces if self.specs else 0):
            spec = self.specs[index % len(self.specs)]
            self.events.append(FaultEvent(spec.kind, None, error="not fired: the producer finished first"))
        return self.events

    def _elapsed(self) -> float:
        return time.monotonic() - self._start

    def _run(self) -> None:
        first = self._first_time()
        if first is None:
            return
        for index in range(self.bounces):
            planned = first + index * self.every_s
            if self._stop.wait(max(0.0, planned - self._elapsed())):
                return
            spec = self.specs[index % len(self.specs)]
            event = FaultEvent(spec.kind, round(planned, 3))
            self.events.append(event)
            self._fire(spec, event)

    def _first_time(self) -> float | None:
        """When the first fault is due; with a count trigger, the moment the producer reached it (None: stopped)."""
        if self.after is None:
            return self.at_s
        while self.sent() < self.after:
            if self._stop.wait(0.02):
                return None
        return self._elapsed()

    def _fire(self, spec: FaultSpec, event: FaultEvent) -> None:
        try:
            event.broker = self._victim(spec)
            event.fired_s = round(self._elapsed(), 3)
            if spec.action == "restart":
                self.faults.restart(event.broker)
            else:
                (self.faults.kill if spec.action == "kill" else self.faults.pause)(event.broker)
                self._stop.wait(spec.down_s)
                if spec.action == "kill":
                    self.faults.restart(event.broker)
                else:
                    self.faults.resume(event.broker)
            event.healed_s = round(self._elapsed(), 3)
        except KafkabenchError as exc:  # a fault that could not be injected or healed is a finding, not a crash
            event.error = str(exc)
        except Exception as exc:  # noqa: BLE001 - the thread must go on: what broke is in the result
            event.error = f"{type(exc).__name__}: {exc}"

    def _victim(self, spec: FaultSpec) -> int:
        if spec.role == "controller":
            return self.faults.controllers()[0]
        leader = self.faults.leader_of(self.topic, 0)
        if leader is None:
            raise KafkabenchError(f"{self.topic}[0] has no leader to {spec.action}")
        if spec.role == "leader":
            return leader
        with KafkaAdmin(self.bootstrap, timeout_s=5) as admin:
            replicas = admin.describe_topic(self.topic).partitions[0].isr
        followers = [broker for broker in replicas if broker != leader]
        if not followers:
            raise KafkabenchError(f"{self.topic}[0] has no in-sync follower to kill (ISR {list(replicas)})")
        return followers[0]

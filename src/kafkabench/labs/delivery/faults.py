"""Broker faults and operations during a delivery run: a thread that fires each fault at its time, heals it, and
records both; an operation (kafkabench.operations: a rolling restart, a leader election) takes a fault's turn, is
carried out step by step, and is over when its last step is.

The first fault fires `at_s` seconds after the start, or once `after` messages were acknowledged; then either
one every `every_s` seconds from the first, or each `after_heal_s` seconds after the previous one healed and
the topic was back to its full ISR (a schedule that holds on a machine of any speed); `bounces` in all, the
given faults taking turns (kill, partition, kill, ...). A fault lasts its own seconds and then heals (a broker
restarted or resumed, a network impairment removed); a clean restart heals when the broker serves again. Each
fault's victim is looked up when it fires (see `kafkabench.faults`): the leader of the topic's partition 0, a
follower of it, a KRaft controller, or a node by id. Faults go through the `Faults` seam only, so an external
cluster refuses them in one line.

While the faults or operations are planned, the topic's partitions are watched (kafkabench.partition_watch): each
partition's time without a leader and under min.insync.replicas goes into the run beside the events.

Stopping the thread (the producer finished) heals a fault that is still down at once. A planned fault that did
not fire is recorded with why (the run ended first, and when; the cluster had not healed from the one before;
no leader to kill), never silently dropped: `coverage` says "2 of 3 planned faults fired".
"""

from __future__ import annotations

import threading
import time
from dataclasses import asdict, dataclass
from typing import Callable, Protocol

from kafkabench.cluster.faults import Faults
from kafkabench.connection import Connection
from kafkabench.core.results import Run
from kafkabench.errors import ConfigError, KafkabenchError
from kafkabench.faults import inject
from kafkabench.faults.spec import FaultSpec
from kafkabench.labs.delivery.scenario import DeliveryScenario
from kafkabench.operations import perform as operation
from kafkabench.operations.spec import OperationSpec
from kafkabench.partition_watch import LOOK_S, Downs, PartitionWatch, spans

JOIN_S = 180.0  # a heal in progress (a restart) may take this long
HEALTH_POLL_S = 2.0  # one look at the topic's ISR while waiting to fire the next fault after a heal


@dataclass
class FaultEvent:
    """One fault as it happened, in seconds since the run's start."""

    fault: str
    planned_s: float | None  # None until the count trigger fired
    broker: int | None = None
    fired_s: float | None = None
    healed_s: float | None = None
    error: str | None = None
    what: str | None = None  # what it did, in words: "broker 1 cut from broker 2, broker 3, both ways (dropped)"
    steps: list[dict] | None = None  # an operation's steps, each with its seconds

    def to_dict(self) -> dict:
        return asdict(self)


class FaultRun:
    def __init__(self, specs: list[FaultSpec | OperationSpec], faults: Faults, bootstrap: str | Connection, topic: str,
                 *, bounces: int, every_s: float, at_s: float = 0.0, after: int | None = None,
                 after_heal_s: float | None = None,
                 heal_timeout_s: float = 120.0, acknowledged: Callable[[], int] = lambda: 0,
                 stage: Stage | None = None) -> None:
        self.specs, self.faults, self.bootstrap, self.topic = specs, faults, bootstrap, topic
        self.stage = stage or Stage()
        self.bounces, self.every_s, self.at_s, self.after = bounces, every_s, at_s, after
        self.after_heal_s, self.heal_timeout_s, self.acknowledged = after_heal_s, heal_timeout_s, acknowledged
        self.events: list[FaultEvent] = []
        self.ended_s: float | None = None  # when the run ended (stop), in seconds since its start
        self._waiting = ""  # what the thread waits for now: a planned fault's reason if the run ends meanwhile
        self._blocked = ""  # why no further fault can fire (the cluster did not heal)
        self._index = 0  # the planned fault the thread is at
        self._stop = threading.Event()
        self.done = threading.Event()  # the schedule is over: every planned fault fired and healed, or cannot fire
        self._thread: threading.Thread | None = None
        self._start = 0.0
        self._member_turn = 0  # consumer faults hit the group's members in turn
        self.watch: PartitionWatch | None = None
        self._down = Downs(self._elapsed)  # brokers a fault or operation stopped, and when, until each serves again

    @classmethod
    def of(cls, scenario: DeliveryScenario, faults: Faults, bootstrap: str | Connection, topic: str,
           stage: Stage | None = None) -> FaultRun:
        """The scenario's faults (none: a run that fires nothing) on `topic`; a node they name that the cluster does
        not have, a network fault on a cluster not on a network of its own, or a target the run does not have (a
        consumer, a coordinator, an output topic) fails here, before any send."""
        specs = [FaultSpec.parse(text) for text in scenario.faults]
        inject.check(specs, faults)
        operations = [OperationSpec.parse(text) for text in scenario.operations]
        operation.check(operations, faults, bootstrap, topic)
        stage = stage or Stage()
        for spec in specs:
            if spec.role == "consumer" and stage.members is None:
                raise ConfigError(f"{spec.kind}: this run has no consumers; give --consumer-modes or --copier")
            if spec.role == "coordinator" and stage.coordinator is None:
                raise ConfigError(f"{spec.kind}: this run has no coordinator; give --transactions, --consumer-modes "
                                  "or --copier")
            if spec.option("of") == "output" and stage.output_topic is None:
                raise ConfigError(f"{spec.kind},of=output: only a copier has an output topic; give --copier")
        return cls([*specs, *operations], faults, bootstrap, topic,
                   bounces=scenario.bounces, every_s=scenario.bounce_every, at_s=scenario.fault_at,
                   after=scenario.fault_after, after_heal_s=scenario.bounce_after_heal,
                   heal_timeout_s=scenario.heal_timeout, stage=stage)

    @property
    def started_at(self) -> float | None:
        """When the run's clock started (monotonic), as the events' seconds count; None before `start`."""
        return self._start if self._thread is not None else None

    @property
    def planned(self) -> int:
        return self.bounces if self.specs else 0

    def start(self) -> None:
        if not self.specs:
            return
        self._start = time.monotonic()
        self.watch = PartitionWatch(self.bootstrap, self.topic, self._elapsed, self._down.now)
        self.watch.start()
        self._thread = threading.Thread(target=self._run, name="kafkabench-faults", daemon=True)
        self._thread.start()

    def stop(self) -> list[FaultEvent]:
        """End the faults: one that is down heals now; the events as they happened, each unfired one with why."""
        self.ended_s = round(self._elapsed(), 3) if self._thread is not None else None
        self._stop.set()
        if self._thread is not None:
            self._thread.join(JOIN_S)
            if self._thread.is_alive():
                self.events.append(FaultEvent("heal", None, error=f"a heal was still running after {JOIN_S:g} s"))
        for index in range(len([event for event in self.events if event.fault != "heal"]), self.planned):
            self.events.append(FaultEvent(self._spec(index).label, None, error=self._unfired_reason(index)))
        return self.events

    def _unfired_reason(self, index: int) -> str:
        if self._blocked:
            return self._blocked
        if self.ended_s is None:
            return "not fired: the run ended before its faults started"
        waiting = self._waiting if index == self._index and self._waiting else "before its turn"
        return f"not fired: the run ended at {self.ended_s:g} s, {waiting}"

    def record(self, run: Run) -> None:
        """Stop, and put into the run what happened: each fault's event, how many of those planned fired, and each
        partition's spans without a leader and under min.insync.replicas (`unavailable`, with the worst of each)."""
        run.params["faults"] = [event.to_dict() for event in self.stop()]
        if self.planned:
            run.params.update(faults_planned=self.planned, faults_fired=self.fired(), fault_coverage=self.coverage())
        if self.watch is not None:
            found = spans(self.watch.stop(), run.params.get("effective_min_isr", 1), self._down.spans)
            run.params["unavailable"] = {
                "look_s": LOOK_S, "looks": len(self.watch.looks), "failed_looks": self.watch.failed,
                "brokers_down": self._down.spans,
                **{f"worst_{name}_s": max((figures[f"{name}_s"] for figures in found.values()), default=0.0)
                   for name in ("leaderless", "under_min_isr")},
                "partitions": {str(p): figures for p, figures in sorted(found.items())}}

    def shortfall(self) -> str | None:
        """Why the run failed `--faults-must-fire`; None when every planned fault fired."""
        missed = [event for event in self.events if event.fired_s is None]
        if not missed:
            return None
        return (f"{self.coverage()} (--faults-must-fire): {missed[0].fault} {missed[0].error}; schedule the faults "
                "by messages (--fault-after, --bounce-after-heal) or send for longer (--count, --rate)")

    def fired(self) -> int:
        return len([event for event in self.events if event.fired_s is not None])

    def coverage(self) -> str:
        """"2 of 3 planned faults fired" ("operations", "faults and operations"); empty without either."""
        kinds = {"operations" if isinstance(spec, OperationSpec) else "faults" for spec in self.specs}
        noun = " and ".join(sorted(kinds))
        return f"{self.fired()} of {self.planned} planned {noun} fired" if self.planned else ""

    def _spec(self, index: int) -> FaultSpec | OperationSpec:
        return self.specs[index % len(self.specs)]

    def _elapsed(self) -> float:
        return time.monotonic() - self._start

    def _run(self) -> None:
        try:
            self._schedule()
        finally:
            self.done.set()

    def _schedule(self) -> None:
        due = self._first_time()
        for index in range(self.bounces):
            self._index = index
            if due is None or not self._wait_until(due, f"before its planned time {due:.1f} s"):
                return
            spec = self._spec(index)
            event = FaultEvent(spec.label, round(due, 3))
            self.events.append(event)
            self._index, self._waiting = index + 1, f"while the {spec.kind} before it was in progress"
            self._fire(spec, event)
            if self._stop.is_set():
                return
            if event.fired_s is not None and event.healed_s is None:
                self._blocked = f"not fired: the cluster had not healed from {_named(event)}: {event.error}"
                return
            due = self._next_time(due, event)

    def _first_time(self) -> float | None:
        """When the first fault is due; with a count trigger, the moment the producer reached it (None: stopped)."""
        if self.after is None:
            return self.at_s
        while (acknowledged := self.acknowledged()) < self.after:
            self._waiting = f"with {acknowledged:,} of the {self.after:,} acknowledged messages it waited for"
            if self._stop.wait(0.02):
                return None
        return self._elapsed()

    def _next_time(self, due: float, event: FaultEvent) -> float | None:
        """Every `every_s` from the first; or `after_heal_s` once the topic is whole again after `event`."""
        if self.after_heal_s is None:
            return due + self.every_s
        if event.fired_s is not None and not self._topic_whole(event):
            return None
        return self._elapsed() + self.after_heal_s

    def _topic_whole(self, event: FaultEvent) -> bool:
        """Waits, bounded and stoppable, until every partition of the topic has its full ISR again."""
        deadline = time.monotonic() + self.heal_timeout_s
        self._waiting = f"while the topic was healing from {_named(event)}"
        problem = ""
        while not self._stop.is_set():
            try:
                self.faults.wait_healthy(HEALTH_POLL_S, [self.topic])
                return True
            except KafkabenchError as exc:
                problem = str(exc)
            if time.monotonic() >= deadline:
                self._blocked = (f"not fired: the cluster had not healed from {_named(event)} within "
                                 f"{self.heal_timeout_s:g} s: {problem}")
                return False
        return False

    def _wait_until(self, due: float, why: str) -> bool:
        """False when the run ended first."""
        self._waiting = why
        return not self._stop.wait(max(0.0, due - self._elapsed()))

    def _fire(self, spec: FaultSpec | OperationSpec, event: FaultEvent) -> None:
        try:
            if isinstance(spec, OperationSpec):
                event.fired_s = round(self._elapsed(), 3)
                performed = operation.perform(spec, self.faults, self.bootstrap, self.topic, self._elapsed,
                                              self.heal_timeout_s, self._stop.is_set, self._down)
                event.what, event.steps, event.error = performed.what, performed.steps, performed.error
                if performed.error is None:
                    event.healed_s = round(self._elapsed(), 3)  # over with its last step
                return
            if spec.role == "consumer":
                injected = self._hit_member(spec, event)
            else:
                topic = self.stage.output_topic if spec.option("of") == "output" else self.topic
                aim = inject.aim(spec, self.faults, topic, self.bootstrap, self.stage.coordinator)
                event.broker = aim.victim
                event.fired_s = round(self._elapsed(), 3)
                if spec.action in ("kill", "pause"):  # its partitions' metadata names it until it is fenced
                    self._down.add(aim.victim)
                injected = inject.inject(spec, self.faults, aim)
            event.what = injected.what
            if spec.down_s is not None:
                self._stop.wait(spec.down_s)
            injected.heal()
            self._down.discard(event.broker)
            event.healed_s = round(self._elapsed(), 3)
        except KafkabenchError as exc:  # a fault that could not be injected or healed is a finding, not a crash
            event.error = _failed(event, str(exc))
        except Exception as exc:  # noqa: BLE001 - the thread must go on: what broke is in the result
            event.error = _failed(event, f"{type(exc).__name__}: {exc}")


    def _hit_member(self, spec: FaultSpec, event: FaultEvent) -> inject.Injected:
        """A consumer of the group killed (its slot then taken by a new process) or paused (then resumed)."""
        members = self.stage.members
        slot = members.aim(self._member_turn)
        self._member_turn += 1
        event.fired_s = round(self._elapsed(), 3)
        if spec.action == "kill":
            return inject.Injected(members.kill(slot), lambda: members.replace(slot))
        return inject.Injected(members.pause(slot), lambda: members.resume(slot))


@dataclass(frozen=True)
class Stage:
    """What a run has beyond its topic for the faults to hit: the consumer group's members (kill-consumer), the
    coordinator's broker (kill-coordinator, found when it fires), a copier's output topic (kill-leader,of=output)."""

    members: Members | None = None
    coordinator: Callable[[], int] | None = None
    output_topic: str | None = None


class Members(Protocol):
    def aim(self, turn: int) -> int: ...
    def kill(self, slot: int) -> str: ...
    def replace(self, slot: int) -> None: ...
    def pause(self, slot: int) -> str: ...
    def resume(self, slot: int) -> None: ...


def _named(event: FaultEvent) -> str:
    return f"{event.fault} of broker {event.broker}" if event.broker is not None else event.fault


def _failed(event: FaultEvent, text: str) -> str:
    return text if event.fired_s is not None else f"not fired: {text}"

"""The other half of the durability trade-off: what each (replication factor, min.insync.replicas, acks)
still does when brokers go down.

Per distinct group of the run's cells, on a fresh one-partition topic with the group's settings (so
"leader" and "follower" each name one broker), and once per way of losing a broker (SIGSTOP, then kill -9):
a probe producer writes a record every 20 ms with the group's acks; one follower goes down, then a second
broker (another follower, or the leader when there is no other). Each step is watched until its outcome
has settled and then judged from what the client was told (`judge`): are writes accepted, refused (with
the broker's error, and how fast) or left without an answer; the longest any write waited (the stall
while the ISR shrinks); and whether a fresh consumer still reads the partition up to its high watermark.
Then the brokers are brought back and the whole cluster waited on until healthy before the next group.

The probe sends with retries=0, so a refusal comes back as the broker's own error on the first attempt;
a producer with default settings retries a refused write until its delivery timeout and then reports a
timeout instead. The probe is the lab's own confluent-kafka (librdkafka) producer, whichever clients the
throughput cells measure.
"""

from __future__ import annotations

import statistics
import threading
import time
import uuid
from collections import Counter
from dataclasses import dataclass, field

from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaError, KafkaException, Producer, TopicPartition

from kafkabench.admin import KafkaAdmin, quiet_client_config
from kafkabench.cluster.faults import Faults
from kafkabench.core.events import Listener
from kafkabench.errors import KafkabenchError
from kafkabench.labs.durability.cells import Cell

PROBE_EVERY_S = 0.02
BASELINE_S = 1.0  # writes before the first fault, so the probe is known to work
MIN_WATCH_S = 2.0  # every step is watched at least this long
MAX_WATCH_S = 30.0  # and at most this long: longer than any default session or lag timeout that shrinks an ISR
SETTLED_S = 1.0  # a step has settled when the writes sent over this long all had the same answer
ANSWER_GRACE_S = 0.5  # how long a write sent just now may take before it counts as unanswered
FIRST_ACK_S = 15.0  # a fresh topic's first acknowledgement (leader, metadata, connections) before the baseline
# the probe's own client settings, recorded in the result: a refusal comes back at the first attempt; a write
# the broker holds (acks=all waiting for a follower) fails after REQUEST_TIMEOUT_MS, and only then do the writes
# queued behind it on the same connection get their answers (a broker answers a connection's requests in order)
PROBE_SETTINGS = {"enable.idempotence": False, "retries": 0, "linger.ms": 0, "request.timeout.ms": 10_000,
                  "message.timeout.ms": 25_000}
READ_TIMEOUT_S = 5.0
ADMIN_TIMEOUT_S = 5.0
MODES = ("pause", "kill")


@dataclass(frozen=True)
class GroupKey:
    replication_factor: int
    min_isr: int
    acks: str

    @property
    def label(self) -> str:
        return f"rf{self.replication_factor} isr{self.min_isr} acks={self.acks}"


def groups(cells: list[Cell]) -> dict[GroupKey, list[Cell]]:
    """The distinct (RF, min.insync.replicas, acks) of the cells, in the cells' order."""
    found: dict[GroupKey, list[Cell]] = {}
    for cell in cells:
        found.setdefault(GroupKey(cell.replication_factor, cell.min_isr, cell.acks), []).append(cell)
    return found


@dataclass
class Write:
    sent_at: float
    answered_at: float | None = None
    error: str | None = None  # the broker's or the client's error name; None: acknowledged

    @property
    def outcome(self) -> str | None:
        """'ok', an error name, or None while unanswered."""
        if self.answered_at is None:
            return None
        return self.error or "ok"


def settled(writes: list[Write], fault_at: float, now: float, isr_settled: bool, leaderless: bool) -> bool:
    """Watched long enough, the ISR no longer waits for the brokers taken down (or the partition has no
    leader left), and the writes sent over the last SETTLED_S all had one answer within ANSWER_GRACE_S, or,
    with no leader, nothing was answered for SETTLED_S (no answer will come)."""
    if now - fault_at < MIN_WATCH_S or not (isr_settled or leaderless):
        return False
    recent = _recent(writes, now)
    if recent and all(w.answered_at is not None and w.answered_at - w.sent_at <= ANSWER_GRACE_S for w in recent) \
            and len({w.outcome for w in recent}) == 1:
        return True  # answered as fast as the client answers now, not released from behind a held request
    last_answer = max((w.answered_at for w in writes if w.answered_at is not None), default=fault_at)
    return leaderless and now - max(last_answer, fault_at) >= SETTLED_S


def _recent(writes: list[Write], now: float) -> list[Write]:
    end = now - ANSWER_GRACE_S
    return [w for w in writes if end - SETTLED_S <= w.sent_at <= end]


def judge(writes: list[Write], fault_at: float, now: float) -> dict:
    """What the writes sent after a fault were told: the verdict is the settled answer of the last ones."""
    after = [w for w in writes if w.sent_at >= fault_at]
    recent = _recent(after, now)
    outcomes = {w.outcome for w in recent}
    if not recent or outcomes == {None}:
        verdict = "no answer"
    elif outcomes == {"ok"}:
        verdict = "accepted"
    elif len(outcomes) == 1:
        verdict = "refused"
    else:
        verdict = "mixed"
    refused = [w for w in recent if w.outcome not in (None, "ok")]
    errors = Counter(w.error for w in after if w.error)
    waits = [(w.answered_at if w.answered_at is not None else now) - w.sent_at for w in after]
    return {
        "writes": verdict, "sent": len(after), "acked": sum(w.outcome == "ok" for w in after),
        "unanswered": sum(w.answered_at is None for w in after), "errors": dict(errors),
        "refusal": refused[0].error if verdict == "refused" else None,
        "refused_in_ms": round(statistics.median((w.answered_at - w.sent_at) * 1000 for w in refused), 3) if refused else None,
        "stall_s": round(max(waits), 3) if waits else None,
    }


def victims(leader: int, replicas: tuple[int, ...], brokers: list[int]) -> list[tuple[int, str]]:
    """The two brokers taken down, in order, with their role: the followers first, then the leader, then
    (replication factor 1) a broker that holds no replica."""
    followers = [(b, "follower") for b in replicas if b != leader]
    others = [(b, "other broker") for b in brokers if b not in replicas]
    return (followers + [(leader, "leader")] + others)[:2]


def roles_text(taken: list[tuple[int, str]]) -> str:
    if len(taken) == 2 and taken[0][1] == taken[1][1]:
        return f"{taken[0][1]}s {taken[0][0]}, {taken[1][0]}"
    return " and ".join(f"{role} {broker}" for broker, role in taken)


class _Probe:
    """One record every PROBE_EVERY_S with the group's acks; each write's answer as the client reports it."""

    def __init__(self, bootstrap: str, topic: str, acks: str) -> None:
        self.topic = topic
        self.writes: list[Write] = []
        self._producer = Producer(quiet_client_config(bootstrap, acks=acks, **PROBE_SETTINGS))
        self._next = time.monotonic()

    def run_for(self, seconds: float, until=None) -> None:
        """Keep writing for `seconds`, or until `until()` says so (asked every 100 ms)."""
        end = time.monotonic() + seconds
        next_check = 0.0
        while (now := time.monotonic()) < end:
            if now >= self._next:
                self._send(now)
                self._next += PROBE_EVERY_S
            self._producer.poll(max(0.0, min(self._next, end) - time.monotonic()))
            if until is not None and now >= next_check:
                next_check = now + 0.1
                if until(now):
                    return

    def _send(self, now: float) -> None:
        write = Write(now)
        self.writes.append(write)

        def answered(error: KafkaError | None, _message) -> None:
            write.answered_at = time.monotonic()
            write.error = error.name() if error is not None else None

        try:
            self._producer.produce(self.topic, b"%d" % len(self.writes), on_delivery=answered)
        except BufferError:
            pass  # the client's queue is full of unanswered writes: this one stays unanswered too

    def close(self, timeout_s: float) -> None:
        self._producer.flush(timeout_s)


def read_back(bootstrap: str, topic: str, timeout_s: float = READ_TIMEOUT_S) -> dict:
    """A fresh consumer reads the partition from the start: does it get up to the high watermark?"""
    started = time.monotonic()
    consumer = Consumer(quiet_client_config(bootstrap, **{"group.id": f"kafkabench-availability-{uuid.uuid4().hex[:8]}",
                                                          "enable.auto.commit": False}))
    read, end = 0, None
    try:
        _, end = consumer.get_watermark_offsets(TopicPartition(topic, 0), timeout=timeout_s / 2)
        consumer.assign([TopicPartition(topic, 0, OFFSET_BEGINNING)])
        while read < end and time.monotonic() - started < timeout_s:
            for message in consumer.consume(1000, timeout=0.2):
                if message.error() is None:
                    read += 1
    except KafkaException as exc:  # a consumer that cannot read at all is the answer, in the client's words
        return {"ok": False, "records": read, "of": end, "seconds": round(time.monotonic() - started, 3),
                "error": exc.args[0].name()}
    finally:
        consumer.close()
    return {"ok": read >= end, "records": read, "of": end, "seconds": round(time.monotonic() - started, 3)}


@dataclass
class GroupResult:
    key: GroupKey
    cells: list[str]
    probed_with: str = "confluent"
    steps: list[dict] = field(default_factory=list)
    error: str | None = None

    def to_dict(self) -> dict:
        return {"replication_factor": self.key.replication_factor, "min_isr": self.key.min_isr,
                "effective_min_isr": min(self.key.min_isr, self.key.replication_factor), "acks": self.key.acks,
                "cells": self.cells, "probed_with": self.probed_with, "steps": self.steps, "error": self.error}


def probe_group(key: GroupKey, cells: list[str], bootstrap: str, faults: Faults, heal_s: float,
                listener: Listener) -> GroupResult:
    """Both modes for one group, each on its own fresh topic and followed by bringing every broker back; a
    probe that cannot be carried out ends the group with its reason. A cluster that does not come back whole
    raises (from `faults.wait_healthy`): nothing measured after that would be trustworthy."""
    result = GroupResult(key, cells)
    for mode in MODES:
        topic = f"kafkabench-availability-{uuid.uuid4().hex[:8]}"
        try:
            _probe_mode(key, mode, topic, bootstrap, faults, listener, into=result.steps)
        except KafkabenchError as exc:
            result.error = f"{mode}: {exc}"
        finally:
            faults.bring_back()
            faults.wait_healthy(heal_s)
            _delete(bootstrap, topic)
        if result.error:
            break
    return result


class ProbeFailed(KafkabenchError):
    """The availability probe could not be carried out."""


def _probe_mode(key: GroupKey, mode: str, topic: str, bootstrap: str, faults: Faults, listener: Listener,
                into: list[dict]) -> None:
    """One follower down, then a second broker, watching the probe's writes after each; each step's findings
    appended to `into` as soon as it is judged."""
    with KafkaAdmin(bootstrap, timeout_s=ADMIN_TIMEOUT_S * 6) as admin:
        admin.create_topic(topic, 1, key.replication_factor, {"min.insync.replicas": str(key.min_isr)}, wait=False)
        partition = admin.wait_until_usable(topic).partitions[0]
        brokers = sorted(admin.brokers())
    taken = victims(partition.leader, partition.replicas, brokers)
    steps = [("one follower", taken[:1])] if taken[0][1] == "follower" else []
    steps.append(("two brokers", taken))
    probe = _Probe(bootstrap, topic, key.acks)
    down: set[int] = set()
    try:
        probe.run_for(FIRST_ACK_S, until=lambda _now: any(w.outcome == "ok" for w in probe.writes))
        if not any(w.outcome == "ok" for w in probe.writes):
            raise ProbeFailed(f"no write was acknowledged in {FIRST_ACK_S:g} s before any fault")
        probe.run_for(BASELINE_S)
        for name, step_taken in steps:
            for broker, _role in step_taken:
                if broker not in down:
                    listener.note(f"availability {key.label}: {'pausing' if mode == 'pause' else 'killing'} broker {broker}")
                    (faults.pause if mode == "pause" else faults.kill)(broker)
                    down.add(broker)
            into.append(_watch(probe, mode, name, step_taken, topic, bootstrap))
    finally:
        probe.close(0)


def _watch(probe: _Probe, mode: str, name: str, taken: list[tuple[int, str]], topic: str, bootstrap: str) -> dict:
    fault_at = time.monotonic()
    down = [b for b, _ in taken]
    with _PartitionWatch(bootstrap, topic, down) as partition:
        probe.run_for(MAX_WATCH_S, until=lambda now: settled(probe.writes, fault_at, now, partition.shrunk_at is not None,
                                                             partition.leader is None and partition.seen))
        now = time.monotonic()
        step = {"mode": mode, "down": name, "brokers": down, "roles": roles_text(taken),
                "observed_s": round(now - fault_at, 3), **judge(probe.writes, fault_at, now),
                "isr_shrunk_s": round(partition.shrunk_at - fault_at, 3) if partition.shrunk_at else None,
                "leader": partition.leader, "isr": partition.isr}
    step["reads"] = read_back(bootstrap, topic)
    return step


class _PartitionWatch:
    """The partition's leader and ISR as the metadata has them, polled beside the probe (a metadata call
    can block for its whole timeout while a broker is paused; the probe's writes must not wait for it), and
    when the ISR first stopped waiting for the brokers taken down (none in it, or no leader left)."""

    def __init__(self, bootstrap: str, topic: str, down: list[int]) -> None:
        self.leader: int | None = None
        self.isr: list[int] | None = None
        self.seen = False
        self.shrunk_at: float | None = None
        self._bootstrap, self._topic, self._down = bootstrap, topic, set(down)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._poll, name="kafkabench-partition-watch", daemon=True)

    def _poll(self) -> None:
        with KafkaAdmin(self._bootstrap, timeout_s=1.0) as admin:
            while not self._stop.wait(0.2):
                try:
                    partition = admin.describe_topic(self._topic).partitions[0]
                except KafkabenchError:
                    continue  # metadata that cannot be had now changes no verdict: the writes' answers decide
                self.leader, self.isr, self.seen = partition.leader, list(partition.isr), True
                if self.shrunk_at is None and (partition.leader is None or not self._down & set(partition.isr)):
                    self.shrunk_at = time.monotonic()

    def __enter__(self) -> _PartitionWatch:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(5.0)


def _delete(bootstrap: str, topic: str) -> None:
    try:
        with KafkaAdmin(bootstrap, timeout_s=ADMIN_TIMEOUT_S * 6) as admin:
            admin.delete_topic(topic)
    except KafkabenchError:
        pass  # a leftover probe topic is harmless; the cluster's health was already checked

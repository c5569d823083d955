"""The other half of the durability trade-off: what each (replication factor, min.insync.replicas, acks)
still does when brokers go down.

Every distinct group of the run's cells gets a fresh one-partition topic with its settings (so "leader"
and "follower" each name one broker), placed so that one sequence of faults means the same for every group
(`placement`), and a probe producer writing a record every 20 ms with the group's acks. One broker goes
down, then a second; first paused (SIGSTOP), then, on fresh topics, killed (kill -9), and, when asked, cut off from
every other node and the clients by a network partition (on a cluster on a network of its own). Each step is watched
until every group's outcome has settled (`settled`) and then judged from what the client was told
(`judge`): writes accepted, refused (the broker's error, and how fast) or left without an answer; the
longest any write waited (the stall while the ISR shrinks); when the ISR stopped waiting for the brokers
down; and whether a fresh consumer still reads the partition up to its high watermark. Then every broker
is brought back and the whole cluster waited on until healthy.

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
from kafkabench.cluster.faults import CLIENTS, Faults
from kafkabench.connection import Connection
from kafkabench.core.events import Listener
from kafkabench.core.liveness import Liveness, Sample, stalls
from kafkabench.errors import KafkabenchError
from kafkabench.labs.durability.cells import Cell

PROBE_EVERY_S = 0.02
BASELINE_S = 1.0  # acknowledged writes before the first fault
MIN_WATCH_S = 2.0  # every step is watched at least this long
MAX_WATCH_S = 30.0  # and at most this long: longer than any default session or lag timeout that shrinks an ISR
SETTLED_S = 1.0  # a step has settled when the writes sent over this long all had the same answer
ANSWER_GRACE_S = 0.5  # how long a write sent just now may take before it counts as unanswered
FIRST_ACK_S = 15.0  # a fresh topic's first acknowledgement (leader, metadata, connections) before the baseline
# the probe's own client settings, recorded in the result: a refusal comes back at the first attempt; a write
# the broker holds (acks=all waiting for a follower) fails after request.timeout.ms, and only then do the writes
# queued behind it on the same connection get their answers (a broker answers a connection's requests in order)
PROBE_SETTINGS = {"enable.idempotence": False, "retries": 0, "linger.ms": 0, "request.timeout.ms": 10_000,
                  "message.timeout.ms": 25_000}
READ_TIMEOUT_S = 15.0  # a read ends with its last record; a loaded machine's client may first try a paused broker
ADMIN_TIMEOUT_S = 5.0
MODES = ("pause", "kill")  # the default; "partition" too when asked


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

    def answer(self, error: str | None, at: float) -> None:
        """Called on the client's thread: the error first, so that a write seen answered has its final outcome."""
        self.error = error
        self.answered_at = at

    def snapshot(self) -> Write:
        """This write as it stands now, for counts that must add up while the client's thread answers others."""
        return Write(self.sent_at, self.answered_at, self.error)


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


def judge(writes: list[Write], fault_at: float, now: float, sent_until: float | None = None) -> dict:
    """What the writes sent after a fault were told: the verdict is the settled answer of the last ones (those
    sent before `sent_until`, when the probe stopped writing, given until `now` to be answered)."""
    after = [w.snapshot() for w in writes if w.sent_at >= fault_at]
    recent = _recent(after, sent_until or now)
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
        "liveness": liveness(after, fault_at, now),
    }


def liveness(after: list[Write], fault_at: float, now: float) -> dict:
    """The probe's liveness verdict for the step (core.liveness): the longest time without an acknowledgement from
    the fault to the step's end (the probe always has a write waiting), when it began after the fault, and whether
    acknowledgements came back (recovered) or not before the step ended (stuck)."""
    acked = sorted(w.answered_at for w in after if w.outcome == "ok")
    samples = [Sample(fault_at, 0, True), *(Sample(t, n, True) for n, t in enumerate(acked, 1)), Sample(now, len(acked), True)]
    return Liveness.of(stalls(samples, now, "stuck")).to_dict(origin_s=fault_at)


def taken_down(brokers: list[int]) -> list[int]:
    """The two brokers taken down, in order: the two highest ids (the lowest leads the groups of RF 3 and stays)."""
    return brokers[-2:]


def placement(replication_factor: int, brokers: list[int]) -> list[int]:
    """A group's partition replicas, its leader first, placed so that one sequence of faults means the same
    for every group: with replication factor 3 or more both brokers taken down are followers (the leader
    stays), with 2 the first is the follower and the second the leader, with 1 the first holds no replica and
    the second is the leader."""
    first, second = taken_down(brokers)
    others = [b for b in brokers if b not in (first, second)]
    if replication_factor >= 3:
        return [others[0], first, second, *others[1:]][:replication_factor]
    return [second, first][:replication_factor]


def role(broker: int, replicas: list[int]) -> str:
    if broker not in replicas:
        return "broker without a replica"
    return "leader" if broker == replicas[0] else "follower"


def roles_text(taken: list[tuple[int, str]]) -> str:
    if len(taken) == 2 and taken[0][1] == taken[1][1]:
        return f"{taken[0][1]}s {taken[0][0]}, {taken[1][0]}"
    return " and ".join(f"{role} {broker}" for broker, role in taken)


class _Probe:
    """One record every PROBE_EVERY_S on a group's topic with its acks; each write's answer as the client says,
    timed by a thread of its own that serves the client's callbacks as they come."""

    def __init__(self, bootstrap: str | Connection, topic: str, acks: str) -> None:
        self.topic = topic
        self.writes: list[Write] = []
        self._producer = Producer(quiet_client_config(bootstrap, acks=acks, **PROBE_SETTINGS))
        self._stop = threading.Event()
        self._answers = threading.Thread(target=self._serve, name=f"kafkabench-probe-{topic}", daemon=True)
        self._answers.start()

    def _serve(self) -> None:
        while not self._stop.is_set():
            self._producer.poll(0.05)

    def send(self, now: float) -> None:
        write = Write(now)
        self.writes.append(write)

        def answered(error: KafkaError | None, _message) -> None:
            write.answer(error.name() if error is not None else None, time.monotonic())

        try:
            self._producer.produce(self.topic, b"%d" % len(self.writes), on_delivery=answered)
        except BufferError:
            pass  # the client's queue is full of unanswered writes: this one stays unanswered too

    @property
    def acknowledged(self) -> bool:
        return any(w.outcome == "ok" for w in self.writes)

    def close(self) -> None:
        self._stop.set()
        self._answers.join(5.0)
        self._producer.flush(0)


def _write_for(probes: list[_Probe], seconds: float, until=None) -> None:
    """Every probe writes a record each PROBE_EVERY_S for `seconds`, or until `until(now)` (asked every 100 ms)."""
    start = time.monotonic()
    next_send, next_check = start, start if until is not None else float("inf")
    while (now := time.monotonic()) < start + seconds:
        if now >= next_send:
            for probe in probes:
                probe.send(now)
            next_send += PROBE_EVERY_S
        if now >= next_check:
            next_check = now + 0.1
            if until(now):
                return
        time.sleep(max(0.0, min(next_send, next_check) - time.monotonic()))


def read_back(bootstrap: str | Connection, topic: str, timeout_s: float = READ_TIMEOUT_S) -> dict:
    """A fresh consumer reads the partition from the start: does it get up to the high watermark?"""
    started = time.monotonic()
    consumer = Consumer(quiet_client_config(bootstrap, **{"group.id": f"kafkabench-availability-{uuid.uuid4().hex[:8]}",
                                                          "enable.auto.commit": False}))
    read, end = 0, None
    try:
        _, end = consumer.get_watermark_offsets(TopicPartition(topic, 0), timeout=timeout_s)
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
                "cells": self.cells, "probed_with": self.probed_with, "probe_settings": PROBE_SETTINGS,
                "steps": self.steps, "error": self.error}


class ProbeFailed(KafkabenchError):
    """The availability probe could not be carried out."""


def probe_groups(found: dict[GroupKey, list[str]], bootstrap: str | Connection, faults: Faults, heal_s: float,
                 listener: Listener, modes: list[str] | tuple[str, ...] = MODES) -> list[GroupResult]:
    """Every group at once, for each way of losing brokers: fresh topics placed by `placement`, one probe
    each, the same two brokers taken down, every broker brought back. A probe that cannot be carried out
    ends the run's availability with its reason; a cluster that does not come back whole raises (from
    `faults.wait_healthy`): nothing measured after that would be trustworthy."""
    results = [GroupResult(key, cells) for key, cells in found.items()]
    with KafkaAdmin(bootstrap, timeout_s=ADMIN_TIMEOUT_S) as admin:
        brokers = sorted(admin.brokers())
    if len(brokers) < 2:
        raise ProbeFailed(f"taking two brokers down needs at least two; the cluster has {len(brokers)}")
    if "partition" in modes and (reason := faults.network_unavailable()):
        raise ProbeFailed(reason)
    for mode in modes:
        topics = {result.key: f"kafkabench-availability-{uuid.uuid4().hex[:8]}" for result in results}
        try:
            _probe_mode(results, topics, mode, brokers, bootstrap, faults, listener)
        except KafkabenchError as exc:
            for result in results:
                result.error = f"{mode}: {exc}"
        finally:
            faults.bring_back()
            faults.wait_healthy(heal_s)
            _delete(bootstrap, list(topics.values()))
        if any(result.error for result in results):
            break
    return results


def _probe_mode(results: list[GroupResult], topics: dict[GroupKey, str], mode: str, brokers: list[int],
                bootstrap: str | Connection, faults: Faults, listener: Listener) -> None:
    """One broker down, then a second, watching every group's writes after each; each step's findings
    appended to its group as soon as they are judged."""
    taken, replicas = taken_down(brokers), {r.key: placement(r.key.replication_factor, brokers) for r in results}
    with KafkaAdmin(bootstrap, timeout_s=ADMIN_TIMEOUT_S * 6) as admin:
        for result in results:
            admin.create_topic(topics[result.key], config={"min.insync.replicas": str(result.key.min_isr)},
                               replica_assignment=[replicas[result.key]], wait=False)
        for result in results:
            admin.wait_until_usable(topics[result.key])
    probes = [_Probe(bootstrap, topics[result.key], result.key.acks) for result in results]
    try:
        _write_for(probes, FIRST_ACK_S, until=lambda _now: all(probe.acknowledged for probe in probes))
        silent = [probe.topic for probe in probes if not probe.acknowledged]
        if silent:
            raise ProbeFailed(f"no write to {', '.join(silent)} was acknowledged in {FIRST_ACK_S:g} s before any fault")
        _write_for(probes, BASELINE_S)
        for count in (1, 2):
            broker = taken[count - 1]
            listener.note(f"availability: {DOING[mode]} broker {broker}")
            _take_down(faults, mode, broker)
            for result, step in zip(results, _watch(probes, mode, taken[:count], bootstrap)):
                down = [(b, role(b, replicas[result.key])) for b in taken[:count]]
                name = "two brokers" if count == 2 else "one follower" if down[0][1] == "follower" else "one broker"
                result.steps.append({"mode": mode, "down": name, "roles": roles_text(down), **step})
    finally:
        for probe in probes:
            probe.close()


DOING = {"pause": "pausing", "kill": "killing", "partition": "cutting off"}


def _take_down(faults: Faults, mode: str, broker: int) -> None:
    if mode == "partition":  # from everything: the other brokers, the controllers and the clients (the probes)
        faults.cut(broker, [node for node in faults.node_ids() if node != broker] + [CLIENTS])
    else:
        (faults.pause if mode == "pause" else faults.kill)(broker)


def _watch(probes: list[_Probe], mode: str, down: list[int], bootstrap: str | Connection) -> list[dict]:
    """Write on until every group has settled (or MAX_WATCH_S), then judge each and read each back."""
    fault_at = time.monotonic()
    with _PartitionWatch(bootstrap, [probe.topic for probe in probes], down) as partitions:
        def all_settled(now: float) -> bool:
            return all(settled(probe.writes, fault_at, now, partitions.shrunk_at.get(probe.topic) is not None,
                               partitions.leaderless(probe.topic)) for probe in probes)

        _write_for(probes, MAX_WATCH_S, until=all_settled)
        sent_until = time.monotonic()
        if not all_settled(sent_until):  # the last writes may yet be answered, slowly: wait for them, bounded
            _wait_answered(probes, sent_until)
        now = time.monotonic()
        steps = []
        for probe in probes:
            shrunk_at = partitions.shrunk_at.get(probe.topic)
            leader, isr = partitions.state.get(probe.topic, (None, None))
            steps.append({"brokers": list(down), "observed_s": round(sent_until - fault_at, 3),
                          **judge(probe.writes, fault_at, now, sent_until),
                          "isr_shrunk_s": round(shrunk_at - fault_at, 3) if shrunk_at else None,
                          "leader": leader, "isr": isr})
    for probe, step in zip(probes, steps):
        step["reads"] = read_back(bootstrap, probe.topic)
    return steps


def _wait_answered(probes: list[_Probe], sent_until: float) -> None:
    """Until the writes the verdict is judged on have their answers, at most the probe's request timeout: a
    loaded machine's acks=all writes were once acknowledged 7-10 s late, and judged unanswered at MAX_WATCH_S."""
    recent = [w for probe in probes for w in _recent(probe.writes, sent_until)]
    deadline = sent_until + PROBE_SETTINGS["request.timeout.ms"] / 1000 + ANSWER_GRACE_S
    while any(w.answered_at is None for w in recent) and time.monotonic() < deadline:
        time.sleep(0.05)


class _PartitionWatch:
    """Each topic's partition leader and ISR as the metadata has them, polled beside the probes (a metadata
    call can block for its whole timeout while a broker is paused; the writes must not wait for it), and
    when each ISR first stopped waiting for the brokers down (none of them in it, or no leader left)."""

    def __init__(self, bootstrap: str | Connection, topics: list[str], down: list[int]) -> None:
        self.state: dict[str, tuple[int | None, list[int]]] = {}
        self.shrunk_at: dict[str, float] = {}
        self._bootstrap, self._topics, self._down = bootstrap, topics, set(down)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._poll, name="kafkabench-partition-watch", daemon=True)

    def leaderless(self, topic: str) -> bool:
        return topic in self.state and self.state[topic][0] is None

    def _poll(self) -> None:
        with KafkaAdmin(self._bootstrap, timeout_s=1.0) as admin:
            while not self._stop.wait(0.2):
                for topic in self._topics:
                    try:
                        partition = admin.describe_topic(topic).partitions[0]
                    except KafkabenchError:
                        continue  # metadata that cannot be had now changes no verdict: the writes' answers decide
                    self.state[topic] = (partition.leader, list(partition.isr))
                    if topic not in self.shrunk_at and (partition.leader is None or not self._down & set(partition.isr)):
                        self.shrunk_at[topic] = time.monotonic()

    def __enter__(self) -> _PartitionWatch:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(5.0)


def _delete(bootstrap: str | Connection, topics: list[str]) -> None:
    try:
        with KafkaAdmin(bootstrap, timeout_s=ADMIN_TIMEOUT_S * 6) as admin:
            for topic in topics:
                admin.delete_topic(topic)
    except KafkabenchError:
        pass  # a leftover probe topic is harmless; the cluster's health was already checked

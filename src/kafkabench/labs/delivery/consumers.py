"""A consumer or copier cell of the delivery lab: the group started on a fresh input topic (and, for a copier, a fresh
output topic), the input written while the group reads it (an idempotent acks=all producer at --rate, so the run
lasts as long as its faults need), faults fired at brokers, the coordinator or the group's members meanwhile; then the
group let finish once it has committed the whole input, the cluster healed, and what the group did judged against
the input as read back (labs.delivery.consumer_checks).

While the group runs, a watch looks at its committed offsets against the input's end every LOOK_S: what is behind
on each partition is noted for the member holding it (core.liveness), and a member that makes no progress for
--stall-bound while records wait on its partitions is stopped and replaced (labs.delivery.group). Every wait is
bounded: a group that commits nothing for the give-up bound is left as it is, and the cell ends with what it did,
judged, and the stall in its liveness verdict: a stalled client is its result, not kafkabench's failure.
"""

from __future__ import annotations

import collections
import contextlib
import threading
import time
from pathlib import Path

import numpy as np

from kafkabench.admin import GroupLag, KafkaAdmin
from kafkabench.cluster.target import Target
from kafkabench.config.redact import redact
from kafkabench.config.translate import translate
from kafkabench.core.delivery_processed import Processed
from kafkabench.core.protocol import DeliveryConsumerParams, DeliveryParams, Task, task_params
from kafkabench.core.results import Run
from kafkabench.errors import ConfigError, KafkabenchError
from kafkabench.labs.delivery import liveness
from kafkabench.faults.spec import FaultSpec
from kafkabench.labs.delivery import consumer_checks as checks
from kafkabench.labs.delivery.cells import DeliveryCell, cell_settings
from kafkabench.labs.delivery.faults import FaultRun, Stage
from kafkabench.labs.delivery.group import ConsumerGroup
from kafkabench.labs.delivery.judge import HISTORY_DIR, heal
from kafkabench.labs.delivery.producer import drive_producers, fill_producer
from kafkabench.labs.delivery.readback import read_spans, read_topic
from kafkabench.labs.delivery.scenario import DeliveryScenario
from kafkabench.labs.topic_check import fresh_topic

PRODUCER_ID = 0
STALL_MARGIN_S = 30  # beyond the scenario's timeout and the stall bound: a group that commits nothing this long
# between two looks at the group's offsets (a committed-offsets fetch and an end-offset query per partition, sent to
# the brokers the measured clients use): a stalled member is replaced within a second of its bound
LOOK_S = 1.0
# a killed member's partitions wait for its session to expire before the group moves them: kafkabench's consumers
# default to the broker's minimum session (group.min.session.timeout.ms), so a kill costs seconds, not 45
CONSUMER_DEFAULTS = {"session.timeout.ms": "6000", "heartbeat.interval.ms": "2000"}
# the default stall bound, in session timeouts: long past a broker's failover, well short of max.poll.interval.ms
# (300 s), after which the group itself drops a member that heartbeats but no longer polls
STALL_SESSIONS = 5


def measure_consumer_cell(run: Run, cell: DeliveryCell, scenario: DeliveryScenario, target: Target, topic: str,
                          out_dir: Path, index: int) -> None:
    if target.launcher.name != "local" and any(FaultSpec.parse(text).role == "consumer" for text in scenario.faults):
        raise ConfigError(f"--fault kill-consumer and pause-consumer signal local processes; with --launcher "
                          f"{target.launcher.name} the consumers run elsewhere: drop those faults or the launcher")
    settings = cell_settings(cell, scenario)
    producer = translate(cell.client, "producer", settings.values("producer"))
    consumer = translate(cell.client, "consumer", {**CONSUMER_DEFAULTS, **settings.values("consumer")})
    run.config = {"producer": redact(producer.config), "consumer": redact(consumer.config),
                  "topic": settings.values("topic")}
    cell_dir = out_dir / HISTORY_DIR / f"{index:03d}-{cell.client}"
    (cell_dir / "producer").mkdir(parents=True, exist_ok=True)
    copying, group = cell.mode == "copy", f"{topic}-group"
    output = f"{topic}-output" if copying else None
    s = cell.settings

    def task_for(slot: int, history_dir: Path | None) -> Task:
        return Task(scenario="delivery_consumer", client=cell.client, bootstrap_servers=target.bootstrap_servers,
                    topic=topic, consumer_config=consumer.config, timeout_s=scenario.timeout,
                    producer_config=translate(cell.client, "producer", {**settings.values("producer"), "transactional.id":
                                                                        f"{topic}-copier-{slot}"}).config if copying else {},
                    params=task_params(DeliveryConsumerParams(
                        mode=cell.mode, group=group, producer=PRODUCER_ID, count=scenario.count, batch=scenario.batch,
                        process_ms=scenario.process_ms, output_topic=output,
                        history_dir=None if copying else target.launcher.share(history_dir))))

    with contextlib.ExitStack() as topics:
        for name in [topic] + ([output] if output else []):
            description = topics.enter_context(fresh_topic(target.connection, name, s.partitions, s.replication_factor,
                                                           s.min_isr, settings.values("topic"), scenario.timeout))
            run.params.setdefault("topic_description", description)
        members = ConsumerGroup(target.launcher, cell.client, scenario.consumers, task_for,
                                None if copying else cell_dir, f"delivery {cell.client} {cell.mode}",
                                stall_bound(scenario, target))
        coordinating = coordinator(target, "transaction", f"{topic}-copier-1") if copying else \
            coordinator(target, "group", group)
        faults = FaultRun.of(scenario, target.faults, target.connection, topic,
                             Stage(members=members, coordinator=coordinating, output_topic=output))
        begun = time.monotonic()
        watch = GroupWatch(members, target, group, topic, s.partitions)
        seen: list = []
        finished_at = None
        try:
            members.start()
            watch.start()
            seen = drive_producers([_input_task(cell, scenario, target, topic, producer.config, cell_dir)], cell,
                                   scenario, target, faults)
            fill_producer(run, seen, cell)
            if not run.error:
                caught_up = watch.until_caught_up(scenario.timeout + (members.stall_bound_s or 0) + STALL_MARGIN_S)
                run.timings.update({"caught_up_s": caught_up} if caught_up is not None else {})
                if caught_up is None:
                    run.params["unfinished"] = f"the group had not committed the whole input when it was given up: " \
                                               f"{watch.problem}"
            finished_at = time.monotonic()
            members.finish()
        finally:
            watch.stop()
            faults.record(run)
            members.stop()
            origin = faults.started_at or (seen[0].started_at if seen and seen[0].started_at else begun)
            run.params["consumer_events"] = members.said(since=origin)
            run.workers += [member.to_dict() for member in members.members]
            run.counters.update(_member_counters(members, copying))
            _liveness(run, cell, seen, members, origin, finished_at or time.monotonic())
        run.params["healed"] = heal(target, topic, scenario.heal_timeout)
        _judge(run, cell, target, topic, output, members)


def stall_bound(scenario: DeliveryScenario, target: Target) -> float | None:
    """The bound after which a stalled member is replaced: --stall-bound, else STALL_SESSIONS x the session timeout
    where the launcher can stop a process; None: stalls are recorded, nobody is replaced."""
    if scenario.stall_bound is not None:
        return scenario.stall_bound
    return STALL_SESSIONS * session_timeout_s(scenario) if target.launcher.name == "local" else None


def check_stall_bound(scenario: DeliveryScenario, target: Target) -> None:
    """A bound the group's own session would outlast, or one a launcher cannot act on: refused before the cell."""
    if scenario.stall_bound is None:
        return
    if target.launcher.name != "local":
        raise ConfigError(f"--stall-bound replaces a stalled member by stopping its process; with --launcher "
                          f"{target.launcher.name} kafkabench cannot stop it: drop --stall-bound (stalls are still "
                          "recorded) or the launcher")
    if scenario.stall_bound < (session := session_timeout_s(scenario)):
        raise ConfigError(f"--stall-bound {scenario.stall_bound:g} s is shorter than the consumers' session.timeout.ms "
                          f"({session:g} s): a member would be replaced before the group could move its partitions; "
                          f"give at least {session:g}")


def session_timeout_s(scenario: DeliveryScenario) -> float:
    given = {**scenario.consumer, **scenario.overrides}.get("session.timeout.ms", CONSUMER_DEFAULTS["session.timeout.ms"])
    return float(given) / 1000


class GroupWatch:
    """A thread that looks at the group's committed offsets against the input's end every LOOK_S, from the group's
    start to its finish: each look noted for the members (ConsumerGroup.look) and members that ended replaced
    (ConsumerGroup.check). A look that fails (a broker down) is skipped; the last problem is kept."""

    def __init__(self, members: ConsumerGroup, target: Target, group: str, topic: str, partitions: int) -> None:
        self.members, self.target, self.group, self.topic, self.partitions = members, target, group, topic, partitions
        self.behind: dict[int, int] | None = None  # as the last look that succeeded saw it ...
        self.looked_at = 0.0  # ... which began then
        self.committed_at = time.monotonic()  # the last look that saw the group commit more
        self.problem = ""
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="group watch", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(60)

    def until_caught_up(self, give_up_s: float) -> float | None:
        """Seconds from now until the group has committed the whole input (None: it committed nothing for
        `give_up_s`, or the watch ended)."""
        begun = time.monotonic()
        while not self._stop.wait(LOOK_S):
            if self.looked_at > begun and not any(self.behind.values()):
                return round(time.monotonic() - begun, 3)
            if time.monotonic() - self.committed_at > give_up_s:
                left = ", ".join(f"[{p}] {n:,} behind" for p, n in sorted((self.behind or {}).items()) if n)
                self.problem = f"nothing committed for {give_up_s:g} s with {left or 'the offsets unknown'}"
                return None
        return None

    def _run(self) -> None:
        with GroupLag(self.target.connection, self.group, self.topic, self.partitions) as lag:
            total = -1
            while not self._stop.wait(LOOK_S):
                looked_at = time.monotonic()
                try:
                    behind = lag.behind()
                except KafkabenchError as exc:  # a broker down: the members are looked at with what was known
                    self.problem = str(exc)
                    self.members.look(self.behind or {})
                    continue
                now_total = -sum(behind.values())
                if now_total != total:
                    total, self.committed_at = now_total, time.monotonic()
                self.behind, self.looked_at = behind, looked_at
                self.members.look(behind)
                self.members.check()


def _member_counters(members: ConsumerGroup, copying: bool) -> dict[str, int]:
    """The processes the group took, and what those that finished said of their commits (a killed process says
    nothing: its commits are in its history's commit log)."""
    said = collections.Counter()
    for member in members.members:
        said.update(member.result.counters if member.result else {})
    names = {"commits": "transactions_committed", "aborted": "transactions_aborted"} if copying else \
        {"commits": "commits", "commit_failures": "commit_failures"}
    return {"processes": len(members.members), **{ours: said[theirs] for theirs, ours in names.items()}}


def _input_task(cell: DeliveryCell, scenario: DeliveryScenario, target: Target, topic: str, config: dict,
                cell_dir: Path) -> Task:
    """The input producer: idempotent, acks=all, async-close, at the scenario's rate."""
    return Task(scenario="delivery", client=cell.client, bootstrap_servers=target.bootstrap_servers, topic=topic,
                producer_config=config, timeout_s=scenario.timeout,
                params=task_params(DeliveryParams(mode="async-close", count=scenario.count, producer=PRODUCER_ID,
                                                  size=scenario.size, singles=0, rate_per_s=float(scenario.rate),
                                                  history_dir=target.launcher.share(cell_dir / "producer"))))


def coordinator(target: Target, kind: str, key: str):
    """Finds, when a fault fires, the broker coordinating a transactional id or a group."""
    def find() -> int:
        with KafkaAdmin(target.connection, timeout_s=30) as admin:
            return admin.coordinator(kind, key)
    return find


def _liveness(run: Run, cell: DeliveryCell, seen: list, members: ConsumerGroup, origin: float, end: float) -> None:
    """Each process's liveness verdict (the input producer's and every member's), and the cell's progress per window."""
    faults = run.params.get("faults", [])
    role = "copier" if cell.mode == "copy" else "consumer"
    rows = [liveness.verdict_row("producer", cell.client, one.track, one.ended_at or end, "finished", origin, faults)
            for one in seen]
    for member in members.members:
        alive = member.ended_at is None or member.ended_at > end
        rows.append(liveness.verdict_row(f"{role} {member.slot}.{member.incarnation}", cell.client, member.track,
                                         end if alive else member.ended_at, liveness.member_how(member.ended, alive),
                                         origin, faults))
    run.params["liveness"] = rows
    run.timeline = liveness.progress_timeline({
        "acknowledged": [[(t, acked) for t, _, acked in one.points] for one in seen],
        "processed": [[(t, processed) for t, processed, _ in member.progress] for member in members.members],
        "committed": [[(t, committed) for t, _, committed in member.progress] for member in members.members]},
        origin, end)


def _judge(run: Run, cell: DeliveryCell, target: Target, topic: str, output: str | None,
           members: ConsumerGroup) -> None:
    given = checks.Input.read(PRODUCER_ID, run.params["count"], read_topic(target.connection, topic))
    if output is None:
        counts, examples = checks.processed([Processed.open(m.history_dir) for m in members.members], given)
    else:
        checker = checks.copier_checker(PRODUCER_ID, given)
        for chunk in read_topic(target.connection, output):
            checker.feed(chunk)
        misses = checker.missing()
        checker.confirm(read_spans(target.connection, output, misses.spans()) if misses.count else ())
        counts = checks.copied(checker.result())
        lost = np.zeros(len(given.present), bool)
        lost[checker.missing().sequence] = True
        examples = {name: found for name, found in (("lost", given.examples(lost)),
                                                    ("duplicated", given.examples(checker.copied(0)))) if found}
    run.counters.update(counts)
    run.params.update(promise=checks.PROMISE_WORDS[cell.mode], failures=checks.failures(cell.mode, counts),
                      **({"examples": examples} if examples else {}))


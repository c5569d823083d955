"""A consumer or copier cell of the delivery lab: the group started on a fresh input topic (and, for a copier, a fresh
output topic), the input written while the group reads it (an idempotent acks=all producer at --rate, so the run
lasts as long as its faults need), faults fired at brokers, the coordinator or the group's members meanwhile; then the
group let finish once it has committed the whole input, the cluster healed, and what the group did judged against
the input as read back (labs.delivery.consumer_checks).

While the group runs, a watch (consumers.watch) looks at its committed offsets against the input's end: what is
behind on each partition is noted for the member holding it, and a member that makes no progress for --stall-bound
while records wait on its partitions is stopped and replaced (consumers.group). Every wait is bounded: a group
that commits nothing for the give-up bound is left as it is, and the cell ends with what it did, judged, and the
stall in its liveness verdict (labs.delivery.liveness): a stalled client is its result, not kafkabench's failure.
"""

from __future__ import annotations

import collections
import contextlib
import time
from pathlib import Path

import numpy as np

from kafkabench.admin import KafkaAdmin
from kafkabench.cluster.target import Target
from kafkabench.config.redact import redact
from kafkabench.config.translate import translate
from kafkabench.core.delivery_processed import Processed
from kafkabench.core.protocol import DeliveryConsumerParams, DeliveryParams, Task, task_params
from kafkabench.core.results import Run
from kafkabench.errors import ConfigError
from kafkabench.faults.spec import FaultSpec
from kafkabench.labs.delivery import consumer_checks as checks
from kafkabench.labs.delivery import liveness
from kafkabench.labs.delivery.cells import DeliveryCell, cell_settings
from kafkabench.labs.delivery.faults import FaultRun, Stage
from kafkabench.consumers.group import ConsumerGroup
from kafkabench.labs.delivery.judge import HISTORY_DIR, heal
from kafkabench.labs.delivery.producer import drive_producers, fill_producer
from kafkabench.labs.delivery.readback import copies_of, read_spans, read_topic
from kafkabench.labs.delivery.scenario import DeliveryScenario
from kafkabench.consumers.watch import GIVE_UP_MARGIN_S, GroupWatch
from kafkabench.labs.delivery.stall_bound import stall_bound
from kafkabench.labs.topic_check import fresh_topic

PRODUCER_ID = 0
# a killed member's partitions wait for its session to expire before the group moves them: kafkabench's consumers
# default to the broker's minimum session (group.min.session.timeout.ms), so a kill costs seconds, not 45
CONSUMER_DEFAULTS = {"session.timeout.ms": "6000", "heartbeat.interval.ms": "2000"}


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
                                stall_bound(scenario, target, CONSUMER_DEFAULTS))
        coordinating = coordinator(target, "transaction", f"{topic}-copier-1") if copying else \
            coordinator(target, "group", group)
        faults = FaultRun.of(scenario, target.faults, target.connection, topic,
                             Stage(members=members, coordinator=coordinating, output_topic=output))
        begun = time.monotonic()
        watch = GroupWatch(members, target.connection, group, topic, s.partitions)
        seen: list = []
        finished_at = None
        try:
            members.start()
            watch.start()
            seen = drive_producers([_input_task(cell, scenario, target, topic, producer.config, cell_dir)], cell,
                                   scenario, target, faults)
            fill_producer(run, seen, cell)
            if not run.error:
                caught_up = watch.until_caught_up(scenario.timeout + (members.stall_bound_s or 0) + GIVE_UP_MARGIN_S)
                run.timings.update({"caught_up_s": caught_up} if caught_up is not None else {})
                if caught_up is None:
                    run.params["unfinished"] = f"the group had not committed the whole input when it was given up: " \
                                               f"{watch.problem}"
            finished_at = time.monotonic()
            watch.stop()  # no replacement from here on
            members.finish()
        finally:
            watch.stop()
            faults.record(run)
            members.stop()
            origin = faults.started_at or (seen[0].started_at if seen and seen[0].started_at else begun)
            run.params["consumer_events"] = members.said(since=origin)
            run.workers += [member.to_dict() for member in members.members]
            run.counters.update(_member_counters(members, copying))
            liveness.consumer_cell(run, cell, seen, members, origin, finished_at or time.monotonic())
        run.params["healed"] = heal(target, topic, scenario.heal_timeout)
        _judge(run, cell, target, topic, output, members, time.time() - (time.monotonic() - origin))


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


def _judge(run: Run, cell: DeliveryCell, target: Target, topic: str, output: str | None,
           members: ConsumerGroup, origin_epoch_s: float) -> None:
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
        duplicated = checker.copied(0)
        examples = {name: found for name, found in (("lost", given.examples(lost)),
                                                    ("duplicated", given.examples(duplicated))) if found}
        if examples.get("duplicated"):
            sequences = [int(s) for s in np.flatnonzero(duplicated)[:checks.EXAMPLES]]
            copies = copies_of(target.connection, output, PRODUCER_ID, sequences)
            examples["duplicated"] = [f"{said}: {checks.copies_text(copies[s], origin_epoch_s)}"
                                      for said, s in zip(examples["duplicated"], sequences)]
    run.counters.update(counts)
    run.params.update(promise=checks.PROMISE_WORDS[cell.mode], failures=checks.failures(cell.mode, counts),
                      **({"examples": examples} if examples else {}))


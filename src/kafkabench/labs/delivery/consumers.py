"""A consumer or copier cell of the delivery lab: the group started on a fresh input topic (and, for a copier, a fresh
output topic), the input written while the group reads it (an idempotent acks=all producer at --rate, so the run
lasts as long as its faults need), faults fired at brokers, the coordinator or the group's members meanwhile; then the
group let finish once it has committed the whole input, the cluster healed, and what the group did judged against
the input as read back (labs.delivery.consumer_checks).

Every wait is bounded: a group that commits nothing for the scenario's timeout (plus a margin) fails the cell,
naming how far it got; the histories written so far are kept.
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
from kafkabench.errors import ConfigError, KafkabenchError
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
STALL_MARGIN_S = 30  # beyond the scenario's timeout: a group that commits nothing this long is stuck
LOOK_S = 0.5  # between two looks at the group's committed offsets
# a killed member's partitions wait for its session to expire before the group moves them: kafkabench's consumers
# default to the broker's minimum session (group.min.session.timeout.ms), so a kill costs seconds, not 45
CONSUMER_DEFAULTS = {"session.timeout.ms": "6000", "heartbeat.interval.ms": "2000"}


class GroupStalled(KafkabenchError):
    """The group committed nothing for too long."""


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
                                None if copying else cell_dir, f"delivery {cell.client} {cell.mode}")
        coordinating = coordinator(target, "transaction", f"{topic}-copier-1") if copying else \
            coordinator(target, "group", group)
        faults = FaultRun.of(scenario, target.faults, target.connection, topic,
                             Stage(members=members, coordinator=coordinating, output_topic=output))
        begun = time.monotonic()
        try:
            members.start()
            seen = drive_producers([_input_task(cell, scenario, target, topic, producer.config, cell_dir)], cell,
                                   scenario, target, faults)
            fill_producer(run, seen, cell)
            if not run.error:
                run.timings["caught_up_s"] = _until_committed(members, target, group, topic, scenario.timeout)
            members.finish()
        finally:
            faults.record(run)
            members.stop()
            run.params["consumer_events"] = members.said(since=faults.started_at or begun)
            run.workers += [member.to_dict() for member in members.members]
            run.counters.update(_member_counters(members, copying))
        run.params["healed"] = heal(target, topic, scenario.heal_timeout)
        _judge(run, cell, target, topic, output, members)


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


def _until_committed(members: ConsumerGroup, target: Target, group: str, topic: str, timeout_s: float) -> float:
    """Seconds from the input's end until the group's committed offsets reach it on every partition; members that
    end by themselves are replaced meanwhile; GroupStalled when nothing is committed for the bound."""
    begun = last_progress = time.monotonic()
    last = -1
    with KafkaAdmin(target.connection, timeout_s=timeout_s) as admin:
        ends = {partition: end for partition, (_, end) in admin.offsets(topic).items()}
        while True:
            members.check()
            committed = admin.committed(group, topic)
            behind = {p: end - committed.get(p, 0) for p, end in ends.items() if committed.get(p, 0) < end}
            if not behind:
                return round(time.monotonic() - begun, 3)
            done = sum(committed.values())
            if done != last:
                last, last_progress = done, time.monotonic()
            elif time.monotonic() - last_progress > timeout_s + STALL_MARGIN_S:
                left = ", ".join(f"[{p}] {n:,} behind" for p, n in sorted(behind.items()))
                raise GroupStalled(f"the consumer group committed nothing for {timeout_s + STALL_MARGIN_S:g} s "
                                   f"with {left}")
            time.sleep(LOOK_S)


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


"""A groups run: a cell per client, protocol and change. Each cell writes a fresh topic at a steady rate (the delivery
lab's idempotent producer, its history saying where each record went) while a consumer group reads it, each record
processed and each batch's offsets committed after it (at least once). The group starts, holds every partition, the
producer starts, and --change-at seconds after its first record the change happens to the group (consumers.group)
or to its topic; meanwhile the group's coordinator is asked for its state every STATE_S and the group's lag looked at
(consumers.watch). Once the producer is done and the group has committed everything, the members finish and their
histories say what the change cost (labs.groups.figures). A share group (labs.groups.share) has no settle and no
coordinator's states: the change waits until every member has processed a record, and its lag is read from the
histories (consumers.backlog). A subscribe-topic cell's members subscribe to a pattern that matches the cell's topic
and, once the change creates it, a second one (`NewTopic`), which a second producer writes."""

from __future__ import annotations

import contextlib
import threading
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Callable

from kafkabench.admin import KafkaAdmin
from kafkabench.config.redact import redact
from kafkabench.config.translate import translate
from kafkabench.consumers.backlog import HistoryBacklog
from kafkabench.consumers.group import ConsumerGroup
from kafkabench.consumers.watch import GroupWatch
from kafkabench.core.events import Listener
from kafkabench.core.protocol import DeliveryConsumerParams, DeliveryParams, Progress, Ready, Result, Start, Task, \
    task_params
from kafkabench.core.results import ResultDocument, Run, write_result
from kafkabench.core.worker_process import WorkerFailed
from kafkabench.errors import ConfigError, KafkabenchError
from kafkabench.labs.base import LabFailed
from kafkabench.labs.document import new_document
from kafkabench.labs.groups import figures
from kafkabench.labs.groups.changes import TOPIC_CHANGES, ChangeSpec
from kafkabench.labs.groups.protocols import named
from kafkabench.labs.groups.scenario import GroupsScenario
from kafkabench.labs.groups.share import share_group_settings, share_groups_on
from kafkabench.labs.topic_check import fresh_topic

if TYPE_CHECKING:
    from kafkabench.cluster.target import Target

PRODUCER_ID, NEW_TOPIC_PRODUCER_ID = 0, 1
NEW_TOPIC_HISTORY = "new-topic-producer"  # in the cell's directory: the second producer's history
STATE_S = 0.1  # between two looks at the group's state: a rebalance's phases last longer than this
READY_S = 120  # a worker's start
HOLD_S = 60  # the group's first assignment: every partition held by a member
STABLE_WAIT_S = 30  # after the group has read everything: how long its coordinator may take to call it stable
SILENCE_MARGIN_S = 30  # beyond the scenario's timeout: a producer silent this long is hung


def run_groups(scenario: GroupsScenario, target: Target, out_dir: Path, listener: Listener) -> ResultDocument:
    if target.launcher.name != "local":
        raise ConfigError(f"the groups lab restarts and kills its members as local processes; --launcher "
                          f"{target.launcher.name} runs them elsewhere: drop the launcher")
    out_dir.mkdir(parents=True, exist_ok=True)
    document = new_document("groups", target, scenario.model_dump(mode="json", exclude_none=True))
    cells = [(client, protocol, change) for client in scenario.clients for protocol in scenario.cell_protocols
             for change in scenario.changes]
    run_id = uuid.uuid4().hex[:8]
    if scenario.group_type == "share":
        document.params["share_groups"] = share_groups_on(target, listener)
    try:
        for index, (client, protocol, change) in enumerate(cells):
            listener.note(f"cell {index + 1}/{len(cells)}: {change} of {scenario.members} under {protocol} ({client})")
            run = Run(client=client, scenario=f"{change} {protocol}",
                      params={"protocol": protocol, "protocol_words": named(protocol).words, "change": change,
                              "members": scenario.members, "partitions": scenario.partitions, "count": scenario.count,
                              "rate": scenario.rate})
            document.runs.append(run)
            try:
                measure_cell(run, scenario, target, f"kafkabench-groups-{run_id}-{index}",
                             out_dir / "histories" / f"{index:03d}-{client}-{protocol}", listener)
            except KafkabenchError as exc:
                run.error = str(exc)
                listener.note(f"cell {index + 1} failed: {exc}; the other cells go on")
            write_result(document, out_dir)
    except KeyboardInterrupt:
        document.error = "interrupted"
    failed = [run for run in document.runs if run.error]
    if failed and not document.error:
        document.error = f"{len(failed)} cell(s) did not run to the end: {failed[0].scenario} ({failed[0].client}): " \
                         f"{failed[0].error}"
    write_result(document, out_dir)
    if document.error:
        raise LabFailed(f"{document.error}; the results and histories so far are kept in {out_dir}", document)
    return document


def measure_cell(run: Run, scenario: GroupsScenario, target: Target, topic: str, cell_dir: Path,
                 listener: Listener) -> None:
    client, protocol, spec = run.client, named(run.params["protocol"]), ChangeSpec.parse(run.params["change"])
    settings = scenario.settings({})
    group = f"{topic}-group"
    producer = translate(client, "producer", {**settings.values("producer"), "acks": "all", "enable.idempotence": "true",
                                              **(input_refresh(client) if spec.kind == "add-partitions" else {})})
    consumers = {slot: translate(client, "consumer", {**settings.values("consumer"), **protocol.settings(client, group, slot)})
                 for slot in range(1, scenario.members + spec.member_slots + 1)}
    run.config = {"producer": redact(producer.config), "consumer": redact(consumers[1].config),
                  "topic": settings.values("topic")}

    new = NewTopic.of(spec, topic, scenario) if spec.kind == "subscribe-topic" else None
    if new is not None:
        run.params["new_topic"] = {"topic": new.name, "partitions": new.partitions, "count": new.count,
                                   "pattern": new.pattern}

    def task_for(slot: int, history_dir: Path | None) -> Task:
        return Task(scenario="delivery_consumer", client=client, bootstrap_servers=target.bootstrap_servers, topic=topic,
                    consumer_config=consumers[slot].config, timeout_s=scenario.timeout,
                    params=task_params(DeliveryConsumerParams(
                        mode="share" if protocol.share else "commit-after", group=group, producer=PRODUCER_ID,
                        count=scenario.count, batch=scenario.batch, process_ms=scenario.process_ms,
                        history_dir=target.launcher.share(history_dir), **(new.member_params if new else {}))))

    def producer_task(on: str, producer_id: int, count: int, history: str) -> Task:
        (cell_dir / history).mkdir(parents=True, exist_ok=True)
        return Task(scenario="delivery", client=client, bootstrap_servers=target.bootstrap_servers, topic=on,
                    producer_config=producer.config, timeout_s=scenario.timeout,
                    params=task_params(DeliveryParams(mode="async-close", count=count, producer=producer_id,
                                                      size=scenario.size, singles=0, rate_per_s=float(scenario.rate),
                                                      history_dir=target.launcher.share(cell_dir / history))))

    with contextlib.ExitStack() as topics:
        topics.enter_context(fresh_topic(target.connection, topic, scenario.partitions, scenario.replication_factor, 1,
                                         settings.values("topic"), scenario.timeout))
        if protocol.share:
            share_group_settings(target, group, scenario.lock_s)
        members = ConsumerGroup(target.launcher, client, scenario.members, task_for, cell_dir,
                                f"groups {client} {protocol.name}")
        watch = GroupWatch(members, target.connection, group, topic, scenario.partitions,
                           backlog=(lambda partitions: HistoryBacklog(cell_dir, partitions)) if protocol.share else None)
        states = StateWatch(target.connection, group)
        sender = Sender(target, client, scenario, producer_task(topic, PRODUCER_ID, scenario.count, "producer"))
        second = None if new is None else Sender(target, client, scenario, producer_task(
            new.name, NEW_TOPIC_PRODUCER_ID, new.count, NEW_TOPIC_HISTORY), "new topic's producer")

        def topic_change(spec: ChangeSpec) -> None:
            if spec.kind == "add-partitions":
                _add_partitions(target, topic, spec.count, watch)
                return
            topics.enter_context(fresh_topic(target.connection, new.name, new.partitions, scenario.replication_factor,
                                             1, settings.values("topic"), scenario.timeout))
            run.params["new_topic"]["created_s"] = round(time.monotonic() - change.begun_mono, 3)
            watch.follow(new.name, new.partitions)
            second.start()

        change, first_members = figures.ChangeTimes(), []
        try:
            members.start()
            if not protocol.share:  # a share group hands out records, not partitions, and has no describe here
                _until_settled(members, scenario.partitions, target, group)
                states.start()
            watch.start()
            sender.start()
            if sender.first_ack(scenario.timeout) is not None:
                if protocol.share:
                    first_members = _until_all_received(run, members)
                time.sleep(max(0.0, sender.first_at + scenario.change_at - time.monotonic()))
                listener.note(f"{run.params['change']}: begins")
                change.begin()
                apply(spec, members, scenario.members, topic_change)
                change.end()
            for one in (sender, second):
                if one is not None and one.started:
                    one.join()
                    if one.error:
                        raise KafkabenchError(f"the {one.label}: {one.error}")
            caught_up = watch.until_caught_up(scenario.timeout)
            if caught_up is None:
                run.params["unfinished"] = f"the group had not committed the whole input when it was given up: " \
                                           f"{watch.problem}"
            change.caught_up()
            watch.stop()
            if not protocol.share:
                states.until_stable(STABLE_WAIT_S)
            states.stop()
            members.finish()
        finally:
            watch.stop()
            states.stop()
            members.stop()
            sender.stop()
            if second is not None:
                second.stop()
        run.client_version = sender.client_version
        if spec.kind == "add-partitions":
            run.params["partitions_after"] = watch.partitions
        run.params["events"] = members.said(since=change.begun_mono or time.monotonic())
        run.workers = [member.to_dict() for member in members.members]
        figures.fill(run, cell_dir, members, change, states.seen, watch.looks, NEW_TOPIC_HISTORY if new else "")
        if first_members:
            figures.all_reading(run, first_members)


def input_refresh(client: str) -> dict[str, str]:
    """The input producer's metadata refreshed every second, so that it writes to new partitions at once: what is
    measured is how soon the group reads them."""
    return {"topic.metadata.refresh.interval.ms": "1000"} if client == "confluent" else {"metadata.max.age.ms": "1000"}


def _add_partitions(target: Target, topic: str, count: int, watch: GroupWatch) -> None:
    with KafkaAdmin(target.connection, timeout_s=30) as admin:
        admin.add_partitions(topic, count)
    watch.grow(watch.partitions + count)


@dataclass(frozen=True)
class NewTopic:
    """subscribe-topic: the topic the members' pattern matches once the change creates it, and what its producer
    writes: at --rate from the change until the first producer is done (the records the first writes after it)."""

    name: str
    partitions: int
    count: int
    pattern: str
    numbered_from: int  # its partitions as the members and the figures number them: after the first topic's

    @classmethod
    def of(cls, spec: ChangeSpec, topic: str, scenario: GroupsScenario) -> NewTopic:
        # the topics' names are letters, digits and hyphens: only the dot needs a class, the same in every engine
        # (java.util.regex, librdkafka's, the broker's RE2/J)
        return cls(f"{topic}.new", spec.count or scenario.partitions,
                   max(1, scenario.count - int(scenario.rate * scenario.change_at)), f"^{topic}([.]new)?$",
                   scenario.partitions)

    @property
    def member_params(self) -> dict:
        return {"pattern": self.pattern, "new_topic": self.name, "new_producer": NEW_TOPIC_PRODUCER_ID,
                "new_count": self.count, "numbered_from": self.numbered_from}


def apply(spec: ChangeSpec, members: ConsumerGroup, size: int, topic_change: Callable[[ChangeSpec], None]) -> None:
    """The change, step by step, each bounded (a close by FINISH_S, a start by the worker's start bound, new
    partitions or a new topic by the admin client's timeout)."""
    if spec.kind == "rolling-restart":
        for slot in range(1, size + 1):
            members.restart(slot)
            if slot < size:
                time.sleep(spec.seconds("pause"))
    elif spec.kind in ("crash", "pause"):  # killed and replaced, or stopped and resumed, `down` seconds apart
        down, back = (members.kill, members.replace) if spec.kind == "crash" else (members.pause, members.resume)
        slots = list(range(1, spec.count + 1))
        for slot in slots:
            down(slot)
        time.sleep(spec.seconds("down"))
        for slot in slots:
            back(slot)
    elif spec.kind == "scale-out":
        for slot in range(size + 1, size + spec.count + 1):
            members.start_in(slot)
    elif spec.kind == "scale-in":
        for slot in range(size, size - spec.count, -1):
            members.close(slot)
    elif spec.kind in TOPIC_CHANGES:
        topic_change(spec)  # "none": nothing happens


def _until_settled(members: ConsumerGroup, partitions: int, target: Target, group: str) -> None:
    """The group's first assignment done before anything is measured: every partition held, every member holding one
    (as many as there are partitions), and the coordinator saying the group is stable."""
    deadline, seen = time.monotonic() + HOLD_S, None
    with KafkaAdmin(target.connection, timeout_s=5) as admin:
        while time.monotonic() < deadline:
            holding = [member.assigned for member in members.current.values() if member.assigned]
            if len({p for held in holding for p in held}) >= partitions and \
                    len(holding) >= min(partitions, len(members.current)):
                try:
                    seen = admin.group_state(group)
                except KafkabenchError:
                    seen = None
                if seen is not None and seen.stable:
                    return
            time.sleep(0.05)
    raise KafkabenchError(f"the group did not settle within {HOLD_S} s of starting: every partition held, each member "
                          f"holding one, the coordinator saying it is stable (last: {seen})")


def _until_all_received(run: Run, members: ConsumerGroup) -> list:
    """A share group's start: every member has processed a record (the broker hands a member records once its
    heartbeat has brought it an assignment), within HOLD_S; the members waited for (their histories time it:
    figures.all_reading). Members still waiting when the bound passed are said."""
    deadline, waited = time.monotonic() + HOLD_S, list(members.current.values())
    while time.monotonic() < deadline:
        if all(member.processed > 0 for member in members.current.values()):
            return waited
        time.sleep(0.05)
    idle = [f"{member.slot}.{member.incarnation}" for member in members.current.values() if not member.processed]
    run.params["idle_members"] = f"member(s) {', '.join(idle)} had processed nothing {HOLD_S} s after the first record"
    return waited


class StateWatch:
    """The group as its coordinator describes it, every STATE_S: (monotonic, GroupState) of each answer."""

    def __init__(self, connection, group: str) -> None:
        self.connection, self.group = connection, group
        self.seen: list = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="group state", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread.ident is not None:
            self._thread.join(30)

    def until_stable(self, timeout_s: float) -> None:
        """Until the coordinator's last answer says stable, or `timeout_s` (KIP-848 members take up to a heartbeat
        interval, 5 s by default, to confirm a new assignment)."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline and not (self.seen and self.seen[-1][1].stable):
            time.sleep(STATE_S)

    def _run(self) -> None:
        with KafkaAdmin(self.connection, timeout_s=5) as admin:
            while not self._stop.wait(STATE_S):
                try:
                    self.seen.append((time.monotonic(), admin.group_state(self.group)))
                except KafkabenchError:
                    pass  # a look that failed is a gap in the series, never a state


class Sender:
    """The input producer on a thread of its own: started, told to go, followed until its result."""

    def __init__(self, target: Target, client: str, scenario: GroupsScenario, task: Task,
                 label: str = "producer") -> None:
        self.target, self.client, self.scenario, self.task, self.label = target, client, scenario, task, label
        self.first_at: float | None = None  # monotonic: its first acknowledgement
        self.error: str | None = None
        self.client_version = ""
        self._worker = None
        self._acked = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"groups {label}", daemon=True)

    @property
    def started(self) -> bool:
        return self._thread.ident is not None

    def start(self) -> None:
        self._thread.start()

    def first_ack(self, timeout_s: float) -> float | None:
        self._acked.wait(timeout_s)
        return self.first_at

    def join(self) -> None:
        self._thread.join(self.scenario.count / self.scenario.rate + self.scenario.timeout + SILENCE_MARGIN_S)
        if self._thread.is_alive():
            self.error = self.error or "no result within its bound"

    def stop(self) -> None:
        if self._worker is not None:
            self._worker.stop(10)

    def _run(self) -> None:
        try:
            self._worker = self.target.launcher.start(f"groups {self.client} {self.label}", self.client)
            self._worker.send(self.task)
            self._worker.receive(Ready, timeout_s=READY_S)
            self._worker.send(Start())
            last = time.monotonic()
            while True:
                message = self._worker.next_message(0.1)
                now = time.monotonic()
                if message is None:
                    if now - last > self.scenario.timeout + SILENCE_MARGIN_S:
                        raise WorkerFailed(self._worker.name, f"said nothing for "
                                           f"{self.scenario.timeout + SILENCE_MARGIN_S:g} s", "timeout")
                    continue
                last = now
                if isinstance(message, Progress) and message.acked and self.first_at is None:
                    self.first_at = now
                    self._acked.set()
                if isinstance(message, Result):
                    self.client_version = message.client_version
                    return
        except WorkerFailed as failed:
            self.error = failed.reason
        finally:
            self._acked.set()

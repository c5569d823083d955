"""The delivery lab's parameters: `kafkabench delivery` and a plan's `lab: delivery` scenario."""

from __future__ import annotations

import re
from typing import Annotated, ClassVar, Literal

from pydantic import AfterValidator, Field, PositiveFloat, PositiveInt, model_validator

from kafkabench.faults.spec import parse_fault
from kafkabench.operations.spec import parse_operation
from kafkabench.labs.scenario import (Acks, Cli, ConsumerSettings, Knob, Overrides, ProducerSettings, Rate,
                                      RecordSize, Scenario, TopicSettings)

MODES = ("sync", "async-close", "async-exit", "async-return", "async-sleep:MS")
_MODE = re.compile(r"^(sync|async-close|async-exit|async-return|async-sleep:[1-9][0-9]*)$")


def _mode(text: str) -> str:
    if not _MODE.match(text):
        raise ValueError(f"{text!r}: must be one of {', '.join(MODES)} (MS: milliseconds > 0)")
    return text


Mode = Annotated[str, AfterValidator(_mode)]
Fault = Annotated[str, AfterValidator(parse_fault)]
Operation = Annotated[str, AfterValidator(parse_operation)]
Switch = Literal["on", "off"]
ConsumerMode = Literal["auto-commit", "commit-after", "commit-before"]


class DeliveryScenario(Scenario):
    lab: Literal["delivery"] = "delivery"
    clients_together: ClassVar[bool] = True  # a plan's clients are crossed inside the lab
    panels: ClassVar[dict[str, tuple[str, ...]]] = {
        "Workload": ("clients", "replication_factors", "min_isr", "partitions", "count", "producers", "size", "singles",
                     "rate", "e2e", "timeout"),
        "Producer modes": ("modes", "acks", "idempotence", "return_wait", "compare_apache"),
        "Consumers and copier": ("consumer_modes", "copier", "consumers", "stall_bound", "batch", "process_ms"),
        "Faults": ("faults", "operations", "fault_at", "fault_after", "bounces", "bounce_every", "bounce_after_heal",
                   "end_after_heal", "faults_must_fire", "heal_timeout"),
        "Transactions": ("transactions", "abort_ratio", "transaction_versions"),
    }
    clients: list[str] = Field(["confluent"], min_length=1, description="Comma-separated: confluent, java, kafka-python, aiokafka.")
    modes: list[Mode] = Field(
        ["sync", "async-close"], min_length=1,
        description="Comma-separated producer modes: sync (each send waits for its answer), async-close (send all, "
                    "then flush and close), async-exit (send all, then exit the process at once), async-return (send "
                    "all, then return without closing: does the process end by itself?), async-sleep:MS (send all, "
                    "sleep MS, then exit at once).")
    acks: Annotated[list[Acks] | None, Knob("producer", "acks")] = Field(
        None, min_length=1, description="Comma-separated: 0, 1, all. Default: the producer settings' acks, else all.")
    idempotence: Annotated[list[Switch] | None, Knob("producer", "enable.idempotence")] = Field(
        None, min_length=1, description="Comma-separated: on, off. Default: the producer settings' enable.idempotence, else off.")
    replication_factors: list[PositiveInt] = Field([3], min_length=1, description="Comma-separated replication factors.")
    min_isr: Annotated[list[PositiveInt] | None, Knob("topic", "min.insync.replicas")] = Field(
        None, min_length=1, description="Comma-separated min.insync.replicas. Default: the topic settings' value, else 1.")
    partitions: PositiveInt = Field(4, description="Partitions of each cell's topic (the seed's 4).")
    count: Annotated[PositiveInt, Cli("--count", "-n")] = Field(10_000, le=2**32, description="Messages per cell (the seed's 10,000).")
    producers: int = Field(1, ge=1, le=64, description="Producer processes per cell, the count split between them, each "
                                                       "with an id and a history of its own (one per node with "
                                                       "--launcher ray); the checker judges them as one run.")
    size: RecordSize = Field(64, ge=14, description="Bytes per message (the id takes 14).")
    singles: int = Field(8, ge=0, description="The first sends, each timed alone (the seed's stopwatch: 8).")
    rate: Rate = Field(-1, description="Messages/s for the bulk, on an open-loop schedule, so that a run lasts as long "
                                        "as its faults need; -1: as fast as the client takes them.")
    faults: Annotated[list[Fault], Cli("--fault", repeat=True)] = Field(
        [], description="A fault during each run (repeatable; several take turns): ACTION-TARGET[:S][,OPTIONS]; "
                        "ACTION kill, pause, restart, partition, delay, loss, bandwidth; TARGET leader, follower, "
                        "controller or a node id; S: seconds until it heals. e.g. kill-leader:5, "
                        "partition-leader:40,from=followers+controllers, delay-follower:30,ms=50, "
                        "loss-leader:20,percent=5, bandwidth-follower:30,mbit=10 (network faults need root: the "
                        "cluster runs on a network of its own).")
    operations: Annotated[list[Operation], Cli("--operation", repeat=True)] = Field(
        [], description="An operation during each run (repeatable), scheduled as the faults are and taking turns "
                        "with them: rolling-restart[,kill][,pause=S] (each broker in turn: a controlled shutdown, or "
                        "kill -9 with kill, started again, back in every ISR before the next; the embedded cluster), "
                        "rolling-upgrade:VERSION[,back] (every node restarted on another pinned release, "
                        "controllers first, then finalized, or with back not finalized and every node rolled back; "
                        "the embedded cluster, one cell), "
                        "elect-leaders (preferred leader election of the topic's partitions; any cluster), "
                        "config,topic=KEY=VALUE[,brokers=KEY=VALUE...] (settings changed live; any cluster), "
                        "reassign,from=B[,to=B2][,partition=P][,throttle=BYTES] (a broker's replicas moved; any "
                        "cluster), add-broker[,throttle=BYTES] (a new broker given its share of the replicas; the "
                        "embedded cluster).")
    fault_at: float = Field(1.0, ge=0, description="Seconds after the first send when the first fault fires.")
    fault_after: PositiveInt | None = Field(None, description="Fire the first fault once this many messages were "
                                                              "acknowledged (instead of --fault-at).")
    bounces: PositiveInt = Field(1, description="How many faults per run.")
    bounce_every: PositiveFloat = Field(5.0, description="Seconds from one fault to the next.")
    bounce_after_heal: PositiveFloat | None = Field(
        None, description="Fire each next fault this many seconds after the previous one healed and the topic is back "
                          "to its full ISR (instead of --bounce-every): a schedule that holds on a slow machine.")
    end_after_heal: float | None = Field(
        None, ge=0, description="Stop sending this many seconds after the last planned fault healed (and, with "
                                "--bounce-after-heal, the topic is back to its full ISR): a run as long as its faults "
                                "take on this machine; --count is then the most each cell sends.")
    faults_must_fire: bool = Field(False, description="Fail a cell in which a planned fault did not fire (the run "
                                                      "ended first, the cluster did not heal, no leader to kill); "
                                                      "without it the verdict says how many fired.")
    transactions: PositiveInt | None = Field(
        None, description="Messages per transaction: each producer transactional (a transactional.id of its own; acks=all "
                          "and idempotence, as Kafka requires), every transaction committed, or aborted on purpose "
                          "(--abort-ratio); the checker adds aborted reads and torn transactions. Default: none.")
    abort_ratio: float = Field(0.0, ge=0, lt=1, description="With --transactions: the share of transactions aborted on "
                                                             "purpose, spread evenly (0.2: every fifth).")
    transaction_versions: list[Annotated[int, Field(ge=0, le=2)]] | None = Field(
        None, min_length=1, description="Comma-separated transaction.version feature levels to run each transactional "
                                        "cell under (--transactions, --copier): 2 is KIP-890's transactions V2 (a new "
                                        "producer epoch for every transaction), 1 and 0 keep the epoch across "
                                        "transactions. kafkabench sets the level on the cluster it started before each "
                                        "cell and puts it back after. Default: the cluster's as it is.")
    consumer_modes: list[ConsumerMode] | None = Field(
        None, min_length=1, description="Comma-separated: auto-commit, commit-after (at-least-once), commit-before "
                                        "(at-most-once). Each cell then judges a consumer group reading the topic as "
                                        "it is written: how many times each message was processed (0, 1, more); "
                                        "--fault kill-consumer hits a member.")
    copier: bool = Field(False, description="Judge an exactly-once copier instead: a group of --consumers copiers "
                                            "reading the topic as it is written and copying each batch to an output "
                                            "topic in a transaction with its offsets; the output must hold every "
                                            "message once. --fault kill-consumer hits a copier, kill-coordinator the "
                                            "transaction coordinator's broker, kill-leader,of=output the output's.")
    consumers: int = Field(1, ge=1, le=16, description="Members of the consumer group (consumers or copiers).")
    stall_bound: PositiveFloat | None = Field(
        None, description="--consumer-modes, --copier: seconds a member may make no progress (nothing processed or "
                          "committed) while records wait on its partitions before it is stopped (SIGKILL) and a new "
                          "process takes its slot; the stall is the client's result, in the cell's liveness verdict. "
                          "At least the consumers' session.timeout.ms. Default: 5 x session.timeout.ms (30 s).")
    batch: PositiveInt = Field(100, description="Records per poll of a consumer or copier: per commit, or per "
                                                "transaction.")
    process_ms: float = Field(0.0, ge=0, description="--consumer-modes: milliseconds each message's processing "
                                                     "takes, so that a kill lands inside a batch.")
    return_wait: PositiveFloat = Field(10.0, description="async-return: seconds the process may take to end by itself "
                                                         "before it is killed.")
    compare_apache: bool = Field(False, description="Also run Apache's VerifiableProducer under each cell's settings "
                                                    "and faults, judged by the same checker.")
    e2e: bool = Field(False, description="A probe consumer of the cell's client reads the topic while the producers "
                                         "send, each message stamped with its intended send time: the e2e latency "
                                         "(stamp to record in the probe's hands) per window, and before, during and "
                                         "after each fault or operation. It never judges: the checker reads the "
                                         "topic again after the run.")
    timeout: PositiveFloat = Field(60, description="Seconds a worker may go without progress, and a sync send or the "
                                                   "final flush may wait.")
    heal_timeout: PositiveFloat = Field(120, description="Seconds the cluster may take to be whole again after a run.")
    producer: ProducerSettings = {}
    consumer: ConsumerSettings = {}
    topic_config: TopicSettings = {}
    overrides: Overrides = {}

    @property
    def planned(self) -> list[str]:
        """What the schedule takes turns with: the faults, then the operations."""
        return [*self.faults, *self.operations]

    @model_validator(mode="after")
    def _one_trigger(self) -> DeliveryScenario:
        if self.fault_after is not None and "fault_at" in self.model_fields_set:
            raise ValueError("give --fault-at or --fault-after, not both")
        if self.bounce_after_heal is not None and "bounce_every" in self.model_fields_set:
            raise ValueError("give --bounce-every or --bounce-after-heal, not both")
        if self.end_after_heal is not None and not (self.faults or self.operations):
            raise ValueError("--end-after-heal ends the sending after the faults: give --fault or --operation too")
        if self.end_after_heal is not None and self.compare_apache:
            raise ValueError("--end-after-heal: Apache's VerifiableProducer sends its whole --count; drop one of them")
        if self.abort_ratio and self.transactions is None:
            raise ValueError("--abort-ratio aborts transactions: give --transactions too")
        if self.consumer_modes and self.copier:
            raise ValueError("give --consumer-modes or --copier, not both: each is a run of its own")
        if self.consuming:
            default = type(self).model_fields["modes"].default
            mixed = [flag for flag, given in (("--modes", self.modes != default), ("--acks", self.acks),
                                              ("--idempotence", self.idempotence), ("--transactions", self.transactions),
                                              ("--compare-apache", self.compare_apache)) if given]
            if mixed:
                raise ValueError(f"{', '.join(mixed)}: with --consumer-modes or --copier, the topic is written by an "
                                 "idempotent producer with acks=all (async-close) and the consumers are judged")
        if self.transaction_versions and not (self.transactions or self.copier):
            raise ValueError("--transaction-versions sets the transaction protocol: give --transactions or --copier")
        if self.stall_bound is not None and not self.consuming:
            raise ValueError("--stall-bound replaces a stalled consumer or copier: give --consumer-modes or --copier")
        if self.e2e and self.consuming:
            raise ValueError("--e2e probes the producers' messages: with --consumer-modes or --copier, the consumers "
                             "are what is measured; drop --e2e")
        if self.process_ms and not self.consumer_modes:
            raise ValueError("--process-ms is the consumers' processing time: give --consumer-modes")
        return self

    @property
    def consuming(self) -> bool:
        """The cells judge consumers (or copiers) rather than the producer."""
        return bool(self.consumer_modes) or self.copier

"""The groups lab's parameters: `kafkabench groups` and a plan's `lab: groups` scenario."""

from __future__ import annotations

from typing import Annotated, ClassVar, Literal

from pydantic import AfterValidator, Field, PositiveFloat, PositiveInt, model_validator

from kafkabench.labs.groups.changes import ChangeSpec, parse_change
from kafkabench.labs.groups.protocols import PROTOCOLS, SHARE, named, unsupported
from kafkabench.labs.scenario import Cli, ConsumerSettings, Overrides, ProducerSettings, Rate, Scenario, TopicSettings

Change = Annotated[str, AfterValidator(parse_change)]
MAX_PARTITIONS = 10_000
CLASSIC_ONLY = {"session.timeout.ms", "heartbeat.interval.ms"}
Protocol = Literal[tuple(PROTOCOLS)]
SHARE_CLIENTS = ("confluent", "java")


class GroupsScenario(Scenario):
    lab: Literal["groups"] = "groups"
    clients_together: ClassVar[bool] = True  # a plan's clients are crossed inside the lab
    panels: ClassVar[dict[str, tuple[str, ...]]] = {
        "Workload": ("clients", "partitions", "replication_factor", "count", "rate", "size", "timeout"),
        "Group": ("group_type", "protocols", "members", "batch", "process_ms", "lock_s"),
        "Change": ("changes", "change_at"),
    }
    clients: list[str] = Field(["confluent"], min_length=1, description="Comma-separated: confluent, java, kafka-python, "
                                                                        "aiokafka.")
    protocols: list[Protocol] = Field(
        ["eager", "consumer"], min_length=1,
        description="Comma-separated rebalance protocols, each a cell: eager (classic, range assignor), cooperative "
                    "(classic, cooperative-sticky), consumer (KIP-848, the broker's uniform assignor), consumer-range "
                    "(KIP-848, range), static (classic, range, group.instance.id per member), consumer-static (KIP-848 "
                    "with group.instance.id). kafka-python and aiokafka: eager and static.")
    group_type: Literal["consumer", "share"] = Field(
        "consumer", description="consumer: a consumer group under each of --protocols; share: a share group (KIP-932, "
                                "Kafka 4.1+ with share.version 1; confluent and java): records, not partitions, handed "
                                "to members, each record acknowledged, handed out again when its member leaves or its "
                                "lock expires.")
    changes: Annotated[list[Change], Cli("--change", repeat=True)] = Field(
        ["rolling-restart"], min_length=1,
        description="What happens to the group, each a cell (repeatable): rolling-restart[,pause=S], crash:K[,down=S], "
                    "pause:K[,down=S], scale-out:K, scale-in:K, add-partitions:K, subscribe-topic[:P], none.")
    change_at: PositiveFloat = Field(4.0, description="Seconds after the first record is written when the change begins.")
    members: int = Field(3, ge=1, le=32, description="Consumer processes in the group at the start.")
    partitions: PositiveInt = Field(6, le=MAX_PARTITIONS, description="Partitions of each cell's topic.")
    replication_factor: PositiveInt = Field(1, description="Replicas of each cell's topic.")
    count: Annotated[PositiveInt, Cli("--count", "-n")] = Field(
        15_000, le=2**32, description="Records per cell, written at --rate: the run lasts count / rate seconds.")
    rate: Rate = Field(1_000, description="Records/s the producer writes, on an open-loop schedule.")
    size: int = Field(64, ge=14, le=1_000_000, description="Bytes per record (the id takes 14).")
    batch: PositiveInt = Field(100, description="Records per poll of a member: per commit (commit-after).")
    process_ms: float = Field(0.0, ge=0, description="Milliseconds each record's processing takes (a sleep).")
    lock_s: PositiveFloat | None = Field(
        None, description="Share groups: seconds a record handed to a member stays locked to it (the group's "
                          "share.record.lock.duration.ms; the broker's group.share.record.lock.duration.ms, 30 s, by "
                          "default, and at least its group.share.min.record.lock.duration.ms, 15 s).")
    timeout: PositiveFloat = Field(60, description="Seconds a worker may go without progress, and the group may take "
                                                   "to read what is left once the producer is done.")
    producer: ProducerSettings = {}
    consumer: ConsumerSettings = {}
    topic_config: TopicSettings = {}
    overrides: Overrides = {}

    @model_validator(mode="after")
    def _possible(self) -> GroupsScenario:
        if self.rate <= 0:
            raise ValueError("--rate: the group is measured against a steady producer; give records/s > 0")
        if (writing_s := self.count / self.rate) <= self.change_at:
            raise ValueError(f"--count {self.count:,} at --rate {self.rate:g}/s is written in {writing_s:g} s, before "
                             f"the change begins (--change-at {self.change_at:g}): give more records or an earlier change")
        for text in self.changes:
            spec = ChangeSpec.parse(text)
            spec.check_members(self.members, text)
            if spec.kind == "add-partitions" and self.partitions + spec.count > MAX_PARTITIONS:
                raise ValueError(f"{text!r}: {self.partitions:,} + {spec.count:,} partitions; a cell's topic takes at "
                                 f"most {MAX_PARTITIONS:,}")
            if spec.kind == "subscribe-topic" and spec.count > MAX_PARTITIONS:
                raise ValueError(f"{text!r}: {spec.count:,} partitions; a cell's topic takes at most "
                                 f"{MAX_PARTITIONS:,}")
            if spec.kind == "subscribe-topic" and self.group_type == "share":
                raise ValueError(f"{text!r}: a share consumer subscribes to topics by name, not by a pattern; give "
                                 "subscribe-topic to a consumer group (drop --group-type share)")
        if self.group_type == "share":
            self._possible_share()
        elif self.lock_s is not None:
            raise ValueError("--lock-s is a share group's lock: give --group-type share, or drop it")
        given = set(self.settings({}).values("consumer"))
        if assignor := given & {"partition.assignment.strategy", "group.protocol", "group.remote.assignor"}:
            raise ValueError(f"{', '.join(sorted(assignor))}: --protocols sets the protocol and the assignor of each "
                             "cell; drop the setting")
        kip848 = [protocol for protocol in self.cell_protocols if not named(protocol).classic]
        if kip848 and (classic := given & CLASSIC_ONLY):
            raise ValueError(f"{', '.join(sorted(classic))}: the classic protocol's settings, which a KIP-848 member "
                             f"refuses ({', '.join(kip848)}): the broker sets them there (group.consumer.*); drop them "
                             "or those protocols")
        refused = [why for client in self.clients for protocol in self.cell_protocols
                   if (why := unsupported(client, protocol))]
        if refused:
            raise ValueError("; ".join(refused))
        return self

    def _possible_share(self) -> None:
        if "protocols" in self.model_fields_set:
            raise ValueError("--protocols: a share group has no rebalance protocol of the members' choosing (the broker "
                             "assigns); drop --protocols, or run the consumer groups without --group-type share")
        if others := [client for client in self.clients if client not in SHARE_CLIENTS]:
            raise ValueError(f"--group-type share: {', '.join(others)} has no share consumer; share groups are for "
                             f"{' and '.join(SHARE_CLIENTS)}")

    @property
    def cell_protocols(self) -> list[str]:
        """What each cell's group runs: the protocols, or the share group."""
        return [SHARE.name] if self.group_type == "share" else list(self.protocols)

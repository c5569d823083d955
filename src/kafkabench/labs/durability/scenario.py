"""The durability lab's parameters: `kafkabench durability` and a plan's `lab: durability` scenario."""

from __future__ import annotations

from typing import Annotated, ClassVar, Literal

from pydantic import Field, NonNegativeInt, PositiveFloat, PositiveInt, model_validator

from kafkabench.labs.scenario import (Acks, Cli, ConsumerSettings, Overrides, ProducerSettings, Rate, RecordSize,
                                      Scenario)

Switch = Literal["on", "off"]


class DurabilityScenario(Scenario):
    lab: Literal["durability"] = "durability"
    clients_together: ClassVar[bool] = True  # a plan's clients are crossed inside the lab, cells interleaved
    preset: Literal["seed"] | None = Field(
        None, description="seed: exactly the seed's three topics (yolo, throughput-rf3, durable) instead of the axes.")
    partitions: list[PositiveInt] = Field([2], min_length=1, description="Comma-separated partition counts.")
    replication_factors: list[PositiveInt] = Field([3], min_length=1, description="Comma-separated replication factors.")
    min_isr: list[PositiveInt] = Field([1], min_length=1, description="Comma-separated min.insync.replicas values.")
    acks: list[Acks] = Field(["all"], min_length=1, description="Comma-separated: 0, 1, all.")
    idempotence: list[Switch] = Field(
        ["off"], min_length=1, description="Comma-separated: on, off (set on every client: librdkafka defaults to off, Java to on).")
    clients: list[str] = Field(["confluent"], min_length=1, description="Comma-separated: confluent, java, kafka-python, aiokafka.")
    count: Annotated[PositiveInt | None, Cli("--count", "-n")] = Field(20_000, description="Records per cell and repeat.")
    duration: PositiveFloat | None = Field(None, description="Seconds per cell and repeat (with --count: whichever comes first).")
    size: RecordSize = Field(100, description="Bytes per record (incompressible).")
    rate: Rate = Field(-1, description="Records/s on an open-loop schedule; -1: as fast as possible.")
    warmup: NonNegativeInt = Field(1_000, description="Records sent to each cell's topic first, not measured.")
    repeats: PositiveInt = Field(3, description="Runs of every cell; the cells against the fastest are one family, "
                                                "decided from 5 repeats for 2 cells, 6 for 3 or 4, 7 for 5, 8 for 6 to 17.")
    order: Literal["shuffled", "sequential", "reverse"] = Field(
        "shuffled", description="Cell order per repeat: shuffled (from --seed), or the seed's own protocol.")
    seed: NonNegativeInt | None = Field(None, description="Seed of the shuffled order; default: a new one, recorded.")
    availability: Annotated[bool | None, Cli("--availability/--no-availability")] = Field(
        None, description="Also stop one follower, then two brokers (paused, then killed) per distinct RF / min.insync / "
                           "acks, and record whether writes are accepted, how long they stall and whether reads go on (default: on with --preset seed).")
    availability_faults: list[Literal["pause", "kill", "partition"]] = Field(
        ["pause", "kill"], min_length=1,
        description="Comma-separated: how the availability probe takes brokers down, in turn: pause (SIGSTOP), kill "
                    "(kill -9), partition (cut from every other node and the clients; the cluster then runs on a "
                    "network of its own, which needs root).")
    compare_apache: bool = Field(
        False, description="Also run Apache's ProducerPerformance on every java cell's settings and topic, side by side.")
    timeout: PositiveFloat = Field(60, description="Seconds without progress before a cell fails.")
    producer: ProducerSettings = {}
    consumer: ConsumerSettings = {}
    overrides: Overrides = {}

    @model_validator(mode="after")
    def _bounded(self) -> DurabilityScenario:
        if self.count is None and self.duration is None:
            raise ValueError("needs count or duration (or both: whichever comes first)")
        return self

    @property
    def probes_availability(self) -> bool:
        return self.availability if self.availability is not None else self.preset == "seed"

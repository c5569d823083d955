"""The throughput lab's parameters: `kafkabench produce` / `kafkabench consume` and a plan's `lab: produce` /
`lab: consume` scenarios."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Annotated, Literal

from pydantic import (Field, NonNegativeFloat, NonNegativeInt, PositiveFloat, PositiveInt, field_validator,
                      model_validator)

from kafkabench.labs.payload import check_value_size
from kafkabench.labs.scenario import (Acks, Cli, Codec, ConsumerSettings, Knob, Overrides, ProducerSettings, Rate,
                                      RecordSize, Scenario, TopicSettings)

COUNT = "Records in all (split over the workers)."
DURATION = "Seconds to run (with --count: whichever comes first)."
CLIENT = "confluent, kafka-python, aiokafka or java."
LOW_RATE = 1_000  # records/s: the produce lab says where the time went at this rate or below unless told otherwise


class _Streaming(Scenario):
    """What producing and consuming share."""

    count: Annotated[PositiveInt | None, Cli("--count", "-n")] = Field(None, description=COUNT)
    duration: PositiveFloat | None = Field(None, description=DURATION)
    client: str = Field("confluent", description=CLIENT)
    interval: PositiveFloat = Field(1.0, description="Seconds per progress line.")
    timeout: PositiveFloat = Field(30, description="Seconds without any progress before the run is failed.")
    warmup: NonNegativeFloat = Field(0, description="Seconds at the start, at the run's rate, kept out of every figure "
                                                    "and reported apart (whole --interval windows); --duration counts "
                                                    "after it, --count from the start.")
    compare_apache: bool = Field(False, description="Also run Apache's perf tool with the same settings and print both.")

    @property
    def warmup_windows(self) -> int:
        return warmup_windows(self.warmup, self.interval)


def warmup_windows(warmup_s: float, interval_s: float) -> int:
    """The progress windows a warm-up takes: its seconds rounded up to whole windows."""
    return math.ceil(round(warmup_s / interval_s, 9))


class ProducerWorkload(Scenario):
    """What producers send and how: the fields every lab built on produce runs shares (produce, max-rate)."""

    client: str = Field("confluent", description=CLIENT)
    size: PositiveInt = Field(100, description="Bytes per record (incompressible), without --payload.")
    payload: Annotated[list[Path], Cli("--payload", repeat=True)] = Field(
        [], description="File whose bytes are a record; repeat to send several in turn.")
    producers: PositiveInt = Field(1, description="Producer worker processes.")
    consumers: NonNegativeInt = Field(0, description="Consumer worker processes reading at the same time (e2e under load).")
    partitions: PositiveInt = Field(1, description="Partitions of a topic created here.")
    replication_factor: PositiveInt = Field(1, description="Replicas of a topic created here.")
    topics: PositiveInt = Field(1, description="Topics, each with --partitions (with --topic NAME: NAME-0000, ...): "
                                               "each producer writes them in turn, each consumer reads them all.")
    keys: Literal["none", "round_robin", "random"] = Field(
        "none", description="Each record's key: none, or one of 10,000 keys in turn or at random (OMB's NO_KEY, "
                            "KEY_ROUND_ROBIN, RANDOM_NANO).")
    acks: Annotated[Acks | None, Knob("producer", "acks")] = Field(None, description="0, 1, all or -1; default: the client's.")
    compression: Annotated[Codec | None, Knob("producer", "compression.type")] = Field(
        None, description="none, gzip, snappy, lz4, zstd; default: the client's.")
    timeout: PositiveFloat = Field(30, description="Seconds without any progress before the run is failed.")
    topic_config: TopicSettings = {}
    producer: ProducerSettings = {}
    consumer: ConsumerSettings = {}
    overrides: Overrides = {}

    # a validator, not the field's type: it holds as well where a lab declares `size` again with its own default (tune)
    _size_carried = field_validator("size")(check_value_size)

    def workload(self) -> dict:
        """This model's workload fields as they are (settings keep their sources), for a ProduceScenario of its own."""
        return {name: getattr(self, name) for name in ProducerWorkload.model_fields if name != "lab"}


class ProduceScenario(ProducerWorkload, _Streaming):
    lab: Literal["produce"] = "produce"
    rate: Rate = Field(-1, description="Records/s over all producers on an open-loop schedule; -1: as fast as possible.")
    record_time_e2e: bool = Field(False, description="The consumers also measure e2e as OpenMessaging Benchmark does "
                                                     "(wall clock minus the record's timestamp, whole ms, samples at "
                                                     "or below 0 dropped), reported beside kafkabench's.")
    jit_warmup: Annotated[NonNegativeInt, Cli(offered=False)] = Field(
        0, description="Records each Java producer sends and has acknowledged before the measurement, not counted "
                       "(its JIT compiles the send path meanwhile); set by the durability lab.")
    topic: Annotated[str | None, Cli(offered=True)] = Field(
        None, description="Topic (created if missing, kept); default: a temporary one.")
    subscriptions: PositiveInt = Field(1, description="Consumer groups each reading every record, --consumers in each.")
    broker_phases: Annotated[bool | None, Cli("--broker-phases/--no-broker-phases")] = Field(
        None, description="Say where the produce time went: the brokers' own phases of the run's Produce requests "
                          "(their request logger, on for the run; kafkabench's own brokers only) and the client's "
                          f"part (default: on at an open-loop --rate up to {LOW_RATE:,} records/s, where logging every "
                          "request costs the brokers little).")

    @property
    def says_broker_phases(self) -> bool:
        if self.broker_phases is not None:
            return self.broker_phases
        return 0 < self.rate <= LOW_RATE and self.topics == 1

    @model_validator(mode="after")
    def _bounded(self) -> ProduceScenario:
        if self.count is None and self.duration is None:
            raise ValueError("needs count or duration (or both: whichever comes first)")
        if self.warmup and self.jit_warmup:
            raise ValueError("warmup (seconds of the run) and jit_warmup (records before it) exclude each other")
        if self.broker_phases and self.topics > 1:
            raise ValueError("broker_phases weighs the requests of one topic: not with topics > 1")
        if self.subscriptions > 1 and not self.consumers:
            raise ValueError("subscriptions are consumer groups: give consumers (in each) too")
        return self



class ConsumeScenario(_Streaming):
    """Without a topic, the lab first fills a fresh one with `count` records of `size` bytes (set-up, not
    measured), reads it checking every value, and drops it."""

    lab: Literal["consume"] = "consume"
    topic: Annotated[str | None, Cli(required=True)] = Field(
        None, description="The topic to read; in a plan, none: a fresh topic filled with count records first.")
    count: Annotated[PositiveInt | None, Cli("--count", "-n")] = Field(None, description=COUNT)
    group: str | None = Field(None, description="Consumer group; default: a new one.")
    start_from: Annotated[Literal["earliest", "latest"], Cli("--from")] = Field(
        "earliest", description="earliest or latest (for a group without offsets).")
    consumers: PositiveInt = Field(1, description="Consumer worker processes in the group.")
    partitions: Annotated[PositiveInt, Cli(offered=False)] = Field(1, description="Partitions of the topic filled when none is given.")
    check: bool = Field(False, description="Every value must be one of the payloads (--size/--payload as produced); "
                                           "always on for a topic the lab filled.")
    size: RecordSize = Field(100, description="With --check: the generated payload's size, as given to produce.")
    payload: Annotated[list[Path], Cli("--payload", repeat=True)] = Field(
        [], description="With --check: the payload files given to produce.")
    topic_config: Annotated[TopicSettings, Cli(offered=False)] = {}
    consumer: ConsumerSettings = {}
    overrides: Overrides = {}

    @model_validator(mode="after")
    def _fillable(self) -> ConsumeScenario:
        if self.topic is None and self.count is None:
            raise ValueError("needs count: the records written to a fresh topic and read back")
        return self

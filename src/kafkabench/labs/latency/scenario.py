"""The latency lab's parameters: the `kafkabench latency` options and a plan's `lab: latency` scenario."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, ClassVar, Literal

from pydantic import Field, NonNegativeFloat, NonNegativeInt, PositiveFloat, PositiveInt

from kafkabench.labs.scenario import (Acks, Cli, ConsumerSettings, Knob, Overrides, ProducerSettings, RecordSize,
                                      Scenario, TopicSettings)

SEED_IMAGE_BYTES = 1_302_245  # the camera image of seed 000


class LatencyScenario(Scenario):
    lab: Literal["latency"] = "latency"
    payload: Path | None = Field(None, description="Send this file's bytes (e.g. a JPEG).")
    size: RecordSize = Field(SEED_IMAGE_BYTES, description="Without --payload: this many incompressible bytes "
                                                            "(default: the seed's 1.3 MB image).")
    count: Annotated[PositiveInt, Cli("--count", "-n")] = Field(200, description="Measured messages per client.")
    warmup: NonNegativeInt = Field(10, description="Messages after the cold one that are not measured.")
    rounds: PositiveInt = Field(10, description="Interleaved rounds the count is split into.")
    pause: NonNegativeFloat = Field(0, description="Seconds of quiet before each message (a camera's frame gap): "
                                                   "latency when client and cluster have gone idle; 0: back to back.")
    clients: list[str] | None = Field(None, min_length=1, description="Comma-separated: confluent,kafka-python,aiokafka,"
                                                                      "java,http,tcp; default: all available.")
    acks: Annotated[Acks, Knob("producer", "acks")] = Field("1", description="Producer acks: 0, 1, all or -1.")
    replication_factor: PositiveInt = Field(1, description="Replicas of each client's topic.")
    topic_config: TopicSettings = {}
    producer: ProducerSettings = {}
    consumer: ConsumerSettings = {}
    overrides: Overrides = {}
    timeout: PositiveFloat = Field(30, description="Seconds one message may take before the run fails.")
    broker_phases: Annotated[bool, Cli("--broker-phases/--no-broker-phases")] = Field(True, description="Say where each Kafka client's produce and e2e time went: "
                                                  "the brokers' own phases of every measured message's Produce and of "
                                                  "the fetch that delivered it (their request logger, on for the run; "
                                                  "kafkabench's own brokers only) and the clients' part.")

    clients_together: ClassVar[bool] = True

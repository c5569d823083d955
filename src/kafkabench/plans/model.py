"""What a plan and a profile file may say, validated at the edge (pydantic); inside, trust the types.

A plan is a list of scenarios (a lab and its parameters) crossed with clients and profiles, run `repeats`
times. A profile is a small file named after the trade-off it makes, holding producer, consumer and topic
settings in Java names. Precedence for a cell: the lab's defaults and the scenario's parameters, then the
profile, then the scenario's own `producer` / `consumer` / `topic` settings.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, ClassVar, Literal, Union

from pydantic import BaseModel, ConfigDict, Field, PositiveFloat, PositiveInt, NonNegativeInt, field_validator, model_validator

from kafkabench.labs.latency import SEED_IMAGE_BYTES

Value = Union[str, int, float, bool]


class Settings(BaseModel):
    """Settings in Java names, by role."""
    model_config = ConfigDict(extra="forbid")

    producer: dict[str, Value] = {}
    consumer: dict[str, Value] = {}
    topic: dict[str, Value] = {}

    def role(self, name: str) -> dict[str, str]:
        return {key: _text(value) for key, value in getattr(self, name).items()}


class Profile(Settings):
    description: str = ""


class _Scenario(Settings):
    name: str | None = Field(None, pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
    clients: list[str] | None = Field(None, min_length=1)
    profiles: list[str] | None = Field(None, min_length=1)
    timeout: PositiveFloat | None = None

    # one cell runs every client (interleaved rounds) or one cell per client
    clients_together: ClassVar[bool] = False


class LatencyScenario(_Scenario):
    lab: Literal["latency"]
    size: PositiveInt = SEED_IMAGE_BYTES
    payload: Path | None = None
    count: PositiveInt = 200
    warmup: NonNegativeInt = 10
    rounds: PositiveInt = 10
    acks: Literal["0", "1", "all"] | None = None
    replication_factor: PositiveInt = 1

    clients_together: ClassVar[bool] = True


class ProduceScenario(_Scenario):
    lab: Literal["produce"]
    size: PositiveInt = 100
    count: PositiveInt | None = None
    duration: PositiveFloat | None = None
    rate: float = Field(-1, description="records/s over all producers; -1: as fast as possible")
    producers: PositiveInt = 1
    consumers: NonNegativeInt = 0
    partitions: PositiveInt = 1
    replication_factor: PositiveInt = 1
    acks: Literal["0", "1", "all"] | None = None
    compression: Literal["none", "gzip", "snappy", "lz4", "zstd"] | None = None

    @field_validator("rate")
    @classmethod
    def _rate(cls, rate: float) -> float:
        if rate != -1 and rate <= 0:
            raise ValueError("must be > 0 (or -1: as fast as possible)")
        return rate

    @model_validator(mode="after")
    def _bounded(self) -> ProduceScenario:
        if self.count is None and self.duration is None:
            raise ValueError("needs count or duration (or both: whichever comes first)")
        return self


class ConsumeScenario(_Scenario):
    """Reads `count` records of `size` bytes that the runner writes to a fresh topic first."""
    lab: Literal["consume"]
    size: PositiveInt = 100
    count: PositiveInt = 100_000
    consumers: PositiveInt = 1
    partitions: PositiveInt = 1


class CompressionScenario(_Scenario):
    lab: Literal["compression"]
    rows: PositiveInt = 100_000
    formats: list[Literal["json", "protobuf", "avro"]] = Field(["json", "protobuf", "avro"], min_length=1)
    codecs: list[Literal["none", "gzip", "snappy", "lz4", "zstd"]] = Field(["none", "gzip", "snappy", "lz4", "zstd"], min_length=1)
    levels: dict[Literal["gzip", "lz4", "zstd"], list[int]] = {}
    dataset: str = "purchases"
    repeats: PositiveInt = 1


Scenario = Annotated[Union[LatencyScenario, ProduceScenario, ConsumeScenario, CompressionScenario], Field(discriminator="lab")]
LABS = ("latency", "produce", "consume", "compression")


class ClusterShape(BaseModel):
    """The embedded cluster a plan starts when no --bootstrap-servers is given."""
    model_config = ConfigDict(extra="forbid")

    brokers: Literal[1, 3] = 1


class Plan(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
    description: str = ""
    repeats: PositiveInt = 1
    clients: list[str] = Field(["confluent"], min_length=1)
    profiles: list[str] = Field(["default"], min_length=1)
    cluster: ClusterShape = ClusterShape()
    scenarios: list[Scenario] = Field(min_length=1)


def _text(value: Value) -> str:
    """As a .properties file would say it: YAML's true is Java's "true", 10 is "10"."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)

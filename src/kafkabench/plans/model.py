"""What a plan and a profile file may say, validated at the edge (pydantic); inside, trust the types.

A plan is a list of scenarios (a lab and its parameters, validated by that lab's own scenario model) crossed
with clients and profiles, run `repeats` times. A profile is a small file named after the trade-off it
makes, holding producer, consumer and topic settings in Java names. Precedence for a cell: the lab's
defaults and the scenario's parameters, then the profile, then the scenario's own `producer` / `consumer` /
`topic_config` settings.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, Union

from pydantic import BaseModel, ConfigDict, Field, PositiveInt, model_validator

from kafkabench.cluster.listeners import Security, parse_listeners
from kafkabench.cluster.variant import BrokerVariant
from kafkabench.errors import ClusterError
from kafkabench.labs.scenario import Scenario, setting_text

Value = Union[str, int, float, bool]
NAME_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.-]*$"


class Settings(BaseModel):
    """Settings in Java names, by role."""
    model_config = ConfigDict(extra="forbid")

    producer: dict[str, Value] = {}
    consumer: dict[str, Value] = {}
    topic: dict[str, Value] = {}

    def role(self, name: str) -> dict[str, str]:
        return {key: setting_text(value) for key, value in getattr(self, name).items()}


class Profile(Settings):
    description: str = ""
    # the broker as a variable: a cluster of the plan's own runs the profile's cells (kafkabench's brokers only)
    broker: dict[str, Value] = Field({}, description="broker settings, server.properties names")
    jvm: list[str] = Field([], description="the brokers' JVM options, after kafkabench's own (-XX:G1HeapRegionSize=4m)")
    kafka_version: str | None = Field(None, description="the brokers' Kafka version; default: kafkabench's pinned one")

    def variant(self) -> BrokerVariant:
        return BrokerVariant.of(self.kafka_version, {k: setting_text(v) for k, v in self.broker.items()}, self.jvm)


class PlanKeys(BaseModel):
    """What a plan adds to a lab's scenario: its name and what it is crossed with."""
    model_config = ConfigDict(extra="ignore")

    name: str | None = Field(None, pattern=NAME_PATTERN)
    clients: list[str] | None = Field(None, min_length=1)
    profiles: list[str] | None = Field(None, min_length=1)
    own_cluster: bool = Field(False, description="each cell on a cluster of its own (the plan's shape), started for it "
                                                 "and stopped after: for operations that change a cluster for good "
                                                 "(an upgrade, an added broker); kafkabench's brokers only")
    kafka_version: str | None = Field(None, description="with own_cluster: the release its brokers start on")
    brokers: int | None = Field(None, ge=1, le=5, description="with own_cluster: its broker count (default: the "
                                                              "plan's cluster's)")

    @model_validator(mode="after")
    def _own_cluster_keys(self) -> PlanKeys:
        if self.kafka_version is not None and not self.own_cluster:
            raise ValueError("kafka_version: a scenario's release is that of a cluster of each cell's own: add "
                             "`own_cluster: true` (or set kafka_version in a profile, for a cluster its cells share)")
        if self.brokers is not None and not self.own_cluster:
            raise ValueError("brokers: a scenario's broker count is that of a cluster of each cell's own: add "
                             "`own_cluster: true` (or set the plan's `cluster: {brokers: N}`)")
        return self


@dataclass(frozen=True)
class PlanScenario:
    keys: PlanKeys
    scenario: Scenario  # validated by its lab's model; settings still carry the source "scenario"
    given: frozenset[str]  # the keys the plan set, so an unset default never conflicts with a profile

    @property
    def lab(self) -> str:
        return self.scenario.lab


class ClusterShape(BaseModel):
    """The embedded cluster a plan starts when no --bootstrap-servers is given."""
    model_config = ConfigDict(extra="forbid")

    brokers: Literal[1, 3] = 1
    controllers: int = Field(0, ge=0, le=3, description="dedicated controller nodes; 0: every node is both")
    security: str = Field("plaintext", description="client listeners, comma-separated (plaintext, ssl, mtls, "
                                                   "sasl_plaintext, sasl_ssl); a cell's security.protocol picks one")
    sasl_mechanism: str = Field("SCRAM-SHA-512", description="for the sasl_* listeners")
    network: Literal["loopback", "isolated"] = Field(
        "loopback", description="isolated: each node in a network namespace of its own, so network faults can cut and "
                                "slow its links (needs root); a plan whose cells ask for network faults gets it anyway")

    def listeners(self) -> Security:
        try:
            return parse_listeners(self.security, self.sasl_mechanism)
        except ClusterError as exc:
            raise ValueError(str(exc).replace("--security", "security").replace("--sasl-mechanism", "sasl_mechanism")) from None

    @model_validator(mode="after")
    def _known_listeners(self) -> ClusterShape:
        self.listeners()
        return self


class LauncherShape(BaseModel):
    """Where a plan's workers run (`--launcher`, `--ray-address`, `--spread` and `--cross-host-e2e` of `kafkabench
    run` win over it)."""
    model_config = ConfigDict(extra="forbid")

    name: Literal["local", "ray"] = "local"
    ray_address: str | None = Field(None, description="the Ray cluster, HOST:PORT; default: RAY_ADDRESS")
    spread: Literal["spread", "pack"] = "spread"
    cross_host_e2e: bool = Field(False, description="ray: consumers read what producers on other nodes wrote")


class Plan(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(pattern=NAME_PATTERN)
    description: str = ""
    repeats: PositiveInt = 1
    clients: list[str] = Field(["confluent"], min_length=1)
    profiles: list[str] = Field(["default"], min_length=1)
    cluster: ClusterShape = ClusterShape()
    launcher: LauncherShape = LauncherShape()
    baseline_profile: str | None = Field(None, description="each other profile's cost is reported against this one")
    scenarios: list[dict[str, Any]] = Field(min_length=1)  # each validated by its lab: see plans.loading

    @model_validator(mode="after")
    def _baseline_is_a_profile(self) -> Plan:
        if self.baseline_profile is not None and self.baseline_profile not in self.profiles:
            raise ValueError(f"baseline_profile {self.baseline_profile} is not one of the plan's profiles "
                             f"({', '.join(self.profiles)})")
        return self

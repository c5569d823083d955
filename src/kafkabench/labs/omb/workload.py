"""OpenMessaging Benchmark's files as they are: a workload (`workloads/*.yaml`, OMB's `Workload` class) and a Kafka
driver (`driver-kafka/*.yaml`, its `Config`), read strictly. OMB ignores a key it does not know; kafkabench refuses
it, in one line naming it, so that no field is silently dropped. Every field of `Workload` is honoured (run.py and
mapping.py say how); defaults are OMB's."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

import javaproperties
import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from kafkabench.errors import ConfigError

KAFKA_DRIVER = "io.openmessaging.benchmark.driver.kafka.KafkaBenchmarkDriver"
KEY_DISTRIBUTORS = {"NO_KEY": "none", "KEY_ROUND_ROBIN": "round_robin", "RANDOM_NANO": "random"}


class _OmbFile(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=False, frozen=True)


class Workload(_OmbFile):
    name: str | None = None
    topics: int = Field(ge=1)
    partitions_per_topic: int = Field(ge=1, alias="partitionsPerTopic")
    key_distributor: Literal["NO_KEY", "KEY_ROUND_ROBIN", "RANDOM_NANO"] = Field("NO_KEY", alias="keyDistributor")
    message_size: int = Field(ge=1, alias="messageSize")
    use_randomized_payloads: bool = Field(False, alias="useRandomizedPayloads")
    random_bytes_ratio: float = Field(0.0, ge=0, le=1, alias="randomBytesRatio")
    randomized_payload_pool_size: int = Field(0, ge=0, le=100_000, alias="randomizedPayloadPoolSize")
    payload_file: str | None = Field(None, alias="payloadFile")
    subscriptions_per_topic: int = Field(ge=0, alias="subscriptionsPerTopic")
    consumer_per_subscription: int = Field(0, ge=0, alias="consumerPerSubscription")
    producers_per_topic: int = Field(ge=1, alias="producersPerTopic")
    producer_rate: int = Field(ge=0, alias="producerRate")
    consumer_backlog_size_gb: int = Field(0, ge=0, alias="consumerBacklogSizeGB")
    backlog_drain_ratio: float = Field(1.0, ge=0, le=1, alias="backlogDrainRatio")
    test_duration_minutes: int = Field(ge=1, alias="testDurationMinutes")
    warmup_duration_minutes: int = Field(1, ge=0, alias="warmupDurationMinutes")

    @model_validator(mode="after")
    def _consistent(self) -> Workload:
        if self.use_randomized_payloads and self.randomized_payload_pool_size < 1:
            raise ValueError("useRandomizedPayloads needs randomizedPayloadPoolSize >= 1")
        if not self.use_randomized_payloads and not self.payload_file:
            raise ValueError("payloadFile is required unless useRandomizedPayloads is true")
        if self.subscriptions_per_topic and self.consumer_per_subscription < 1:
            raise ValueError("subscriptionsPerTopic needs consumerPerSubscription >= 1")
        if self.consumer_backlog_size_gb and not self.producer_rate:
            raise ValueError("consumerBacklogSizeGB needs a producerRate: a backlog is built at a known rate "
                             "(OMB refuses it too)")
        if self.consumer_backlog_size_gb and not self.subscriptions_per_topic:
            raise ValueError("consumerBacklogSizeGB needs subscriptions to drain it")
        return self

    @property
    def keys(self) -> str:
        return KEY_DISTRIBUTORS[self.key_distributor]


class KafkaDriver(_OmbFile):
    """OMB's Kafka driver file: the settings its four `*Config` texts hold (Java properties), commonConfig merged
    into the producer's and the consumer's (theirs win), as OMB's driver merges them."""

    name: str = Field(min_length=1)
    driver_class: str = Field(alias="driverClass")
    replication_factor: int = Field(1, ge=1, alias="replicationFactor")
    reset: bool = False
    topic_config: str = Field("", alias="topicConfig")
    common_config: str = Field("", alias="commonConfig")
    producer_config: str = Field("", alias="producerConfig")
    consumer_config: str = Field("", alias="consumerConfig")

    @model_validator(mode="after")
    def _kafka(self) -> KafkaDriver:
        if self.driver_class != KAFKA_DRIVER:
            raise ValueError(f"driverClass {self.driver_class}: kafkabench runs Kafka's driver ({KAFKA_DRIVER}) only")
        for field in ("topic_config", "common_config", "producer_config", "consumer_config"):
            _properties(getattr(self, field), type(self).model_fields[field].alias)  # a bad line now, not mid-run
        return self

    def settings(self, kind: Literal["topic", "common", "producer", "consumer"]) -> dict[str, str]:
        field = f"{kind}_config"
        return _properties(getattr(self, field), type(self).model_fields[field].alias)


def _properties(text: str, what: str) -> dict[str, str]:
    try:
        return {key.strip(): value.strip() for key, value in javaproperties.loads(text).items()}
    except ValueError as exc:
        raise ValueError(f"{what} is not Java properties text: {exc}") from None


DEFAULT_DRIVER = KafkaDriver.model_validate({"name": "Kafka", "driverClass": KAFKA_DRIVER})


def load_workload(path: Path) -> Workload:
    return _load(Workload, path, "workload")


def load_driver(path: Path) -> KafkaDriver:
    return _load(KafkaDriver, path, "driver")


def _load(model: type[_OmbFile], path: Path, kind: str):
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"OMB {kind} file {path} does not exist") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"OMB {kind} file {path} cannot be read: {exc}") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" (line {mark.line + 1})" if mark is not None else ""
        raise ConfigError(f"OMB {kind} file {path} is not valid YAML{where}: {getattr(exc, 'problem', exc)}") from None
    if not isinstance(data, dict):
        raise ConfigError(f"OMB {kind} file {path}: expected a mapping of OMB's {kind} fields")
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(f"OMB {kind} file {path}: {_explained(exc, model)}") from None


def _explained(exc: ValidationError, model: type[BaseModel]) -> str:
    error = exc.errors()[0]
    more = f" (and {len(exc.errors()) - 1} more)" if len(exc.errors()) > 1 else ""
    field = ".".join(str(part) for part in error["loc"])
    if error["type"] == "extra_forbidden":
        known = ", ".join(info.alias or name for name, info in model.model_fields.items())
        return f"{field}: not a field of OMB's {model.__name__} ({known}){more}"
    return f"{field + ': ' if field else ''}{_why(error)}{more}"


def _why(error: dict) -> str:
    kind, ctx = error["type"], error.get("ctx", {})
    if kind == "missing":
        return "required"
    if kind == "value_error":
        return str(ctx.get("error", error["msg"]))
    if kind == "literal_error":
        return f"must be one of {ctx.get('expected')}"
    return error["msg"][0].lower() + error["msg"][1:]

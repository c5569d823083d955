"""The compression lab's parameters: `kafkabench compression` and a plan's `lab: compression` scenario."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BeforeValidator, Field, PositiveFloat, PositiveInt

from kafkabench.errors import ConfigError
from kafkabench.formats.codecs import FORMATS
from kafkabench.labs.scenario import Cli, Overrides, ProducerSettings, Scenario

CODECS = ("none", "gzip", "snappy", "lz4", "zstd")
LEVELED = ("gzip", "lz4", "zstd")  # KIP-390


def parse_levels(items: list[str]) -> dict[str, list[int]]:
    """`zstd=1,3,19` -> {"zstd": [1, 3, 19]}."""
    levels: dict[str, list[int]] = {}
    for item in items:
        if not isinstance(item, str):
            raise ConfigError(f"--levels {item!r}: expected CODEC=L1,L2 text, such as zstd=1,3,19")
        codec, sep, values = item.partition("=")
        if not sep or codec not in LEVELED:
            raise ConfigError(f"--levels {item!r}: expected CODEC=L1,L2 with CODEC one of {', '.join(LEVELED)}")
        try:
            levels[codec] = [int(v) for v in values.split(",") if v.strip()]
        except ValueError:
            raise ConfigError(f"--levels {item!r}: levels are whole numbers") from None
    return levels


def _levels(value: Any) -> Any:
    """A ValueError, so a plan's error says where (pydantic locates it) and the CLI names the flag once."""
    try:
        return parse_levels(value) if isinstance(value, list) else value
    except ConfigError as exc:
        raise ValueError(str(exc).removeprefix("--levels ")) from None


class CompressionScenario(Scenario):
    lab: Literal["compression"] = "compression"
    rows: PositiveInt = Field(100_000, description="Rows per cell.")
    formats: list[str] = Field(list(FORMATS), min_length=1, description="Comma-separated: json,protobuf,avro.")
    codecs: list[str] = Field(list(CODECS), min_length=1, description="Comma-separated: none,gzip,snappy,lz4,zstd.")
    levels: Annotated[dict[Literal["gzip", "lz4", "zstd"], list[int]], BeforeValidator(_levels),
                      Cli("--levels", repeat=True)] = Field(
        {}, description="Per-codec levels (KIP-390), e.g. zstd=1,3,9 (repeatable; librdkafka takes up to 12).")
    dataset: str = Field("purchases", description="purchases, FILE.csv, or 'images DIR'.")
    client: str = Field("confluent", description="confluent, kafka-python or aiokafka.")
    repeats: PositiveInt = Field(1, description="Runs of every cell, in a different order each time.")
    producer: ProducerSettings = {}
    overrides: Overrides = {}
    timeout: PositiveFloat = Field(60, description="Seconds without progress before a cell fails.")

    def rebased(self, base: Path) -> CompressionScenario:
        if self.dataset.lower().endswith(".csv") and not Path(self.dataset).is_absolute():
            return self.model_copy(update={"dataset": str(base / self.dataset)})
        return self

"""The capacity lab's parameters: `kafkabench max-rate` and a plan's `lab: max-rate` scenario."""

from __future__ import annotations

import math
import re
from typing import Annotated, ClassVar, Literal

from pydantic import Field, PositiveFloat, PositiveInt, field_validator, model_validator

from kafkabench.errors import ConfigError
from kafkabench.faults.spec import FaultSpec
from kafkabench.labs.capacity.slo import FORM, Slo, parse_slo
from kafkabench.labs.scenario import Cli, PositiveRate
from kafkabench.labs.throughput.scenario import ProducerWorkload

AUTO = "auto"


class MaxRateScenario(ProducerWorkload):
    lab: Literal["max-rate"] = "max-rate"
    panels: ClassVar[dict[str, tuple[str, ...]]] = {
        "Workload": ("client", "size", "payload", "producers", "consumers", "partitions", "replication_factor",
                     "topics", "keys", "acks", "compression", "timeout"),
        "Objectives": ("slo", "metric"),
        "Search": ("start_rate", "ceiling", "precision", "settle", "measure", "hold", "holds", "max_steps", "searches",
                   "sweep",
                   "repeats"),
        "Faults": ("faults",),
    }
    slo: Annotated[list[str], Cli("--slo", repeat=True)] = Field(
        [], description=f"Latency objective, {FORM}; repeat for several. None: only the rate, errors and lag decide.")
    metric: Literal["e2e", "publish"] = Field(
        "e2e", description="e2e (send schedule to consumer, needs --consumers >= 1) or publish (send schedule to ack).")
    consumers: int = Field(1, ge=0, description="Consumer worker processes reading at the same time.")
    start_rate: PositiveRate | None = Field(None, description="Records/s of the first step; default: a quarter of "
                                                               "what a short unpaced probe achieves.")
    ceiling: PositiveRate | None = Field(None, description="Highest records/s tried; default: twice the probe's.")
    precision: float = Field(0.05, gt=0, le=1, description="Stop when the highest passing and the lowest failing rate "
                                                            "are within this fraction.")
    settle: float = Field(5, ge=0, description="Each step's warm-up: seconds at its rate before its measured part, "
                                               "reported apart and not judged; java: at least 5 (its JVM's start and "
                                               "JIT).")
    measure: PositiveFloat = Field(10, description="Measured seconds of each step.")
    hold: float = Field(30, ge=0, description="Seconds of each hold that confirms the found rate (0: no hold).")
    holds: PositiveInt = Field(3, description="Holds in a row the answer must pass, each a fresh run: a rate that "
                                              "held once may not hold a minute later on a shared machine.")
    max_steps: PositiveInt = Field(14, description="Most steps of each search; most failed holds.")
    searches: PositiveInt = Field(2, description="Searches, one after the other: the answer is their median found rate "
                                                 "with their range, which is the capacity's own spread on this cluster "
                                                 "(1: one search, its spread unknown).")
    sweep: str | None = Field(None, description="Instead of a search, fixed rates: RATE,RATE,... (records/s) or "
                                                "auto (from a tenth to 1.2x of the probe's rate): the latency-vs-rate curve.")
    repeats: PositiveInt = Field(3, description="With --sweep: runs of each rate, interleaved.")
    faults: Annotated[list[str], Cli("--fault", repeat=True)] = Field(
        [], description="A network fault held for the whole run (repeatable), on a broker named by id: "
                        "delay-2,ms=20 (broker 2 across a slow link: acks=all then waits on it, think cross-zone), "
                        "loss-2,percent=1, bandwidth-2,mbit=100, partition-2,from=clients. The cluster then runs on a "
                        "network of its own (root).")

    @field_validator("faults")
    @classmethod
    def _held_faults(cls, faults: list[str]) -> list[str]:
        for text in faults:
            spec = FaultSpec.parse(text)
            if not spec.is_network:
                raise ValueError(f"{text!r}: max-rate holds network faults (partition, delay, loss, bandwidth) for its "
                                 "whole run; kill and pause belong to the delivery and durability labs")
            if not spec.role.isdigit() or (spec.option("to") not in (None, "clients") and not spec.option("to").isdigit()):
                raise ValueError(f"{text!r}: name the broker by id (e.g. delay-2,ms=20): a leader or follower changes "
                                 "with every step's topic")
            if ":" in text.split(",", 1)[0]:
                raise ValueError(f"{text!r}: held for the whole run, it takes no duration")
        return faults

    @field_validator("slo")
    @classmethod
    def _slos(cls, slos: list[str]) -> list[str]:
        parsed = []
        for text in slos:
            try:
                parsed.append(parse_slo(text))
            except ConfigError as exc:
                raise ValueError(str(exc).removeprefix("--slo ")) from None
        if len({slo.percentile for slo in parsed}) < len(parsed):
            raise ValueError("one objective per percentile")
        return slos

    @field_validator("sweep")
    @classmethod
    def _sweep(cls, sweep: str | None) -> str | None:
        if sweep is None or sweep.strip().lower() == AUTO:
            return sweep and AUTO
        try:
            rates = [float(part) for part in sweep.split(",") if part.strip()]
        except ValueError:
            raise ValueError(f"{sweep!r}: give records/s as RATE,RATE,... or auto") from None
        if not rates or not all(math.isfinite(rate) and rate > 0 for rate in rates):
            raise ValueError(f"{sweep!r}: every rate must be a finite number > 0")
        return sweep

    @model_validator(mode="after")
    def _consistent(self) -> MaxRateScenario:
        if self.metric == "e2e" and self.consumers < 1:
            raise ValueError("--metric e2e needs --consumers 1 or more (or --metric publish)")
        if self.sweep is not None and "searches" in self.model_fields_set:
            raise ValueError("--searches is the search's; a sweep runs each rate --repeats times")
        if self.start_rate and self.ceiling and self.start_rate > self.ceiling:
            raise ValueError(f"--start-rate {self.start_rate:g} is above --ceiling {self.ceiling:g}")
        return self

    @property
    def slos(self) -> list[Slo]:
        return [parse_slo(text) for text in self.slo]

    @property
    def sweep_rates(self) -> list[float] | None:
        """The rates asked for; None with auto (the probe decides) or without a sweep."""
        if self.sweep is None or self.sweep == AUTO:
            return None
        return [float(part) for part in self.sweep.split(",") if part.strip()]


_SIZE = re.compile(r"(?P<number>\d+(?:\.\d+)?)\s*(?P<unit>b|kb|mb|gb|kib|mib|gib)?")
_UNIT_BYTES = {"b": 1, None: 1, "kb": 10**3, "mb": 10**6, "gb": 10**9, "kib": 2**10, "mib": 2**20, "gib": 2**30}


def parse_bytes(text: str) -> int:
    """`2GB` (10^9), `500MiB` (2^20), `1000000` (bytes)."""
    match = _SIZE.fullmatch(text.strip().lower())
    if match is None or float(match["number"]) <= 0:
        raise ValueError(f"{text!r}: give a size such as 2GB, 500MB or 512MiB")
    return int(float(match["number"]) * _UNIT_BYTES[match["unit"]])


class BacklogScenario(ProducerWorkload):
    lab: Literal["backlog"] = "backlog"
    rate: PositiveRate = Field(10_000, description="Records/s the producers keep sending throughout, open loop.")
    backlog: str | None = Field(None, description="Payload bytes to pile up before the consumers start: 2GB "
                                                  "(10^9), 500MiB (2^20); default: --backlog-seconds.")
    backlog_seconds: PositiveFloat | None = Field(None, description="Or: seconds of producing before the consumers "
                                                                    "start (default 20 when --backlog is not given).")
    consumers: int = Field(1, ge=1, description="Consumer worker processes that drain it, in a fresh group from the "
                                                "topic's start.")
    drained_lag: PositiveFloat = Field(1.0, description="Drained once the consumers' e2e p99 over a window is under "
                                                        "this many seconds.")
    max_drain: PositiveFloat = Field(300, description="Seconds the drain may take before it is reported as not "
                                                      "finishing, with the rates measured and the time projected.")
    interval: PositiveFloat = Field(0.5, description="Seconds per progress window (the drain time's resolution).")
    warmup: float = Field(0, ge=0, description="The producers' first seconds, a warm-up: what they write is part of "
                                               "the backlog, their figures a run of their own, kept out of the "
                                               "build's.")

    @field_validator("backlog")
    @classmethod
    def _backlog(cls, backlog: str | None) -> str | None:
        if backlog is not None:
            parse_bytes(backlog)
        return backlog

    @model_validator(mode="after")
    def _one_size(self) -> BacklogScenario:
        if self.backlog is not None and self.backlog_seconds is not None:
            raise ValueError("give --backlog or --backlog-seconds, not both")
        if self.backlog_seconds is not None and self.warmup >= self.backlog_seconds:
            raise ValueError(f"--warmup {self.warmup:g} is part of the build: give it less than --backlog-seconds "
                             f"{self.backlog_seconds:g}")
        return self

    @property
    def backlog_bytes(self) -> int | None:
        return parse_bytes(self.backlog) if self.backlog else None

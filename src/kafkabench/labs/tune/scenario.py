"""`kafkabench tune GOAL`'s parameters: the workload every trial runs (as `produce` takes it), the goal, the SLOs,
the budget and where the study lives."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, ClassVar, Literal

from pydantic import Field, NonNegativeFloat, NonNegativeInt, PositiveFloat, PositiveInt, field_validator, model_validator

from kafkabench.config.properties import parse_overrides
from kafkabench.errors import ConfigError
from kafkabench.labs.capacity.slo import FORM, Slo, parse_slo
from kafkabench.labs.latency.scenario import SEED_IMAGE_BYTES
from kafkabench.labs.scenario import Cli, PositiveRate
from kafkabench.labs.throughput.scenario import ProducerWorkload
from kafkabench.report.significance import MAX_REPEATS, repeats_for

OBJECTIVES = {"p50": 50.0, "p99": 99.0}


class TuneScenario(ProducerWorkload):
    lab: Literal["tune"] = "tune"
    panels: ClassVar[dict[str, tuple[str, ...]]] = {
        "Workload": ("client", "size", "payload", "producers", "consumers", "partitions", "replication_factor", "acks",
                     "compression", "timeout"),
        "Goal": ("rate", "max_rate", "one_at_a_time", "count", "warmup", "pause", "objective", "precision",
                 "max_steps", "slo"),
        "Search": ("trials", "time", "study", "space", "keep", "settle", "measure", "seed"),
        "The final word": ("noise_runs", "finalists", "final_runs", "fdr"),
    }
    goal: Annotated[Literal["latency", "throughput", "pareto"], Cli(positional=True)] = Field(
        "latency", description="latency: the lowest e2e percentile (--objective) at --rate, within the SLOs; "
                               "throughput: the most records/s within the SLOs (each trial a short max-rate search); "
                               "pareto: the front of e2e p99 against records/s (each trial one rate, sampled too).")
    size: PositiveInt = Field(SEED_IMAGE_BYTES, description="Bytes per record (incompressible), without --payload "
                                                            "(default: the size of seed 000's 1.3 MB camera image).")
    consumers: int = Field(1, ge=1, description="Consumer worker processes reading at the same time (e2e).")
    rate: PositiveRate = Field(30, description="latency: records/s every trial offers on an open-loop schedule "
                                                "(the seed's 30 frames/s).")
    max_rate: PositiveRate | None = Field(None, description="pareto: the highest rate a trial offers, the lowest a "
                                                            "hundredth of it (default: 1.2x what the default's "
                                                            "producers send unpaced).")
    one_at_a_time: bool = Field(False, description="latency: each trial sends one record at a time, the next once the "
                                                    "last was read (the latency lab's way), instead of --rate.")
    count: PositiveInt = Field(50, description="latency --one-at-a-time: measured records per trial.")
    warmup: NonNegativeInt = Field(5, description="latency --one-at-a-time: records per trial before the measured ones.")
    pause: NonNegativeFloat = Field(0, description="latency --one-at-a-time: seconds of quiet before each record (a "
                                                   "camera's frame gap, 0.033 at 30 frames/s); 0: back to back.")
    objective: Literal["p50", "p99"] = Field("p50", description="latency: the e2e percentile the tune minimises.")
    precision: float = Field(0.05, gt=0, le=1, description="throughput: each trial's search stops when its bracket is "
                                                            "within this fraction.")
    max_steps: PositiveInt = Field(8, description="throughput: most steps of each trial's search.")
    slo: Annotated[list[str], Cli("--slo", repeat=True)] = Field(
        [], description=f"Latency objective every recommendation must meet, {FORM}; repeat for several.")
    trials: PositiveInt = Field(40, description="Most measured trials (the default's noise-floor runs and the final "
                                                "re-runs come on top).")
    time: PositiveFloat | None = Field(None, description="Most seconds of trials; the final re-runs come on top.")
    study: Path | None = Field(None, description="Journal file of the study: a tune given the same file resumes it, "
                                                 "and optuna-dashboard opens it (default: study.journal in --out).")
    space: Path | None = Field(None, description="Search space YAML (default: the one shipped for --client).")
    keep: str | None = Field(None, description="Settings never changed, NAME=VALUE,...: e.g. "
                                               "acks=all,enable.idempotence=true (they are set as given).")
    settle: float = Field(2, ge=0, description="Seconds of each trial before its measured part; java: at least 5 (its JVM's start and JIT).")
    measure: PositiveFloat = Field(8, description="Measured seconds of each trial.")
    noise_runs: PositiveInt = Field(3, description="Runs of the default first: the noise floor.")
    finalists: PositiveInt = Field(3, description="Best trials re-measured against the default at the end.")
    final_runs: PositiveInt | None = Field(None, description="Re-runs of each finalist and of the default, interleaved "
                                                         "(default: the fewest with which one of --finalists can be "
                                                         "called beyond noise among them: 6 for 3).")
    fdr: float = Field(0.05, gt=0, le=0.5, description="The false discovery rate across the finalists: one is "
                                                       "recommended only when its q-value is below it.")
    seed: int = Field(0, description="The sampler's random seed: the same seed proposes the same trials.")

    @field_validator("slo")
    @classmethod
    def _slos(cls, slos: list[str]) -> list[str]:
        for text in slos:
            try:
                parse_slo(text)
            except ConfigError as exc:
                raise ValueError(str(exc).removeprefix("--slo ")) from None
        return slos

    @field_validator("keep")
    @classmethod
    def _keep(cls, keep: str | None) -> str | None:
        if keep is not None:
            try:
                parse_overrides([item for item in keep.split(",") if item.strip()], "--keep")
            except ConfigError as exc:
                raise ValueError(str(exc).removeprefix("--keep ")) from None
        return keep

    @model_validator(mode="after")
    def _one_payload(self) -> TuneScenario:
        if self.one_at_a_time and self.goal != "latency":
            raise ValueError("--one-at-a-time: only the latency goal sends one record at a time")
        if self.one_at_a_time and len(self.payload) > 1:
            raise ValueError("--one-at-a-time: give one --payload (the record sent each time)")
        return self

    @property
    def slos(self) -> list[Slo]:
        return [parse_slo(text) for text in self.slo]

    @property
    def objective_percentile(self) -> float:
        return OBJECTIVES[self.objective]

    @property
    def kept(self) -> dict[str, str]:
        if not self.keep:
            return {}
        given = parse_overrides([item for item in self.keep.split(",") if item.strip()], "--keep")
        return {key: setting.value for key, setting in given.items()}

    @property
    def reruns(self) -> int:
        """--final-runs, else the fewest that can decide among the finalists."""
        return self.final_runs or repeats_for(self.finalists, self.fdr) or MAX_REPEATS

"""The OMB lab's parameters: `kafkabench omb WORKLOAD.yaml... [--driver DRIVER.yaml]` and a plan's `lab: omb`."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

from pydantic import Field, NonNegativeFloat, PositiveFloat, model_validator

from kafkabench.labs.scenario import Cli, Scenario


class OmbScenario(Scenario):
    lab: Literal["omb"] = "omb"
    workloads: Annotated[list[Path], Cli(positional=True, repeat=True)] = Field(
        [], min_length=1, description="OMB workload files (its workloads/*.yaml), run one after the other.")
    driver: Path | None = Field(None, description="OMB's Kafka driver file (driver-kafka/*.yaml): replication and the "
                                                  "topic, producer and consumer settings; default: none, the client's "
                                                  "own defaults and replication factor 1.")
    client: str = Field("java", description="confluent, kafka-python, aiokafka or java (OMB's driver is Java's "
                                            "client).")
    duration: PositiveFloat | None = Field(None, description="Measured seconds instead of the workload's "
                                                             "testDurationMinutes (a shorter run; the result says so).")
    warmup: NonNegativeFloat | None = Field(None, description="Warm-up seconds instead of warmupDurationMinutes.")
    interval: PositiveFloat = Field(10, description="Seconds per window of the result's lists (OMB's: 10).")
    slo: Annotated[list[str], Cli("--slo", repeat=True)] = Field(
        ["p99=50ms"], description="producerRate 0: the latency objective the capacity lab's rate must hold "
                                  "(max-rate's --slo).")
    timeout: PositiveFloat = Field(30, description="Seconds without any progress before a run is failed.")
    cluster_times: bool = Field(False, description="After each workload, on a cluster kafkabench started: time the "
                                                   "creation of its topics, a controller failover and a broker restart "
                                                   "at its count of topics and partitions.")

    @model_validator(mode="after")
    def _some_workload(self) -> OmbScenario:
        if not self.workloads:
            raise ValueError("give one OMB workload file or more (its workloads/*.yaml)")
        return self

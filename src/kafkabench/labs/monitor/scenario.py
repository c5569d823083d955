"""`kafkabench monitor`'s parameters."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field, PositiveFloat, PositiveInt, model_validator

from kafkabench.labs.scenario import Scenario


class MonitorScenario(Scenario):
    lab: Literal["monitor"] = "monitor"
    probe_topic: str = Field("kafkabench-probe", min_length=1, description="The topic probes go through (created "
                             "with a partition led by each broker when missing).")
    interval: PositiveFloat = Field(1.0, description="Seconds between probes (one per partition), lag polls and "
                                    "windows.")
    sla: PositiveFloat = Field(20.0, description="Seconds a probe may take to be read back before it counts as lost.")
    duration: PositiveFloat | None = Field(None, description="Seconds to watch; default: until Ctrl-C.")
    metrics_port: int = Field(9645, ge=0, le=65535, description="Port of the Prometheus endpoint (0: none).")
    metrics_host: str = Field("127.0.0.1", min_length=1, description="Address the endpoint listens on.")
    groups: list[str] = Field([], description="Comma-separated regexes of the consumer groups whose lag is "
                              "watched; default: every group.")
    lag_window: PositiveInt = Field(10, ge=2, description="Lag polls a group's status is judged over.")
    json_lines: bool = Field(False, description="Print one window per line as JSON instead of the table.")
    write_config: Path | None = Field(None, description="Write the Grafana dashboard, its provisioning, a Prometheus "
                                      "scrape configuration and alerting rules into this directory, and exit.")
    broker_metrics: list[str] = Field([], description="With --write-config: comma-separated HOST:PORT of the brokers' "
                                      "JMX exporters to scrape; default: the running embedded cluster's nodes.")

    @model_validator(mode="after")
    def _sla_spans_intervals(self) -> MonitorScenario:
        if self.sla < self.interval:
            raise ValueError("sla must be at least one interval")
        return self

"""`kafkabench monitor` as a lab: a watch instead of an experiment, on the same measurement core."""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING

from kafkabench.core.events import Listener
from kafkabench.core.results import ResultDocument, Run
from kafkabench.errors import ConfigError
from kafkabench.labs.base import Lab
from kafkabench.labs.monitor import report
from kafkabench.labs.monitor.scenario import MonitorScenario

if TYPE_CHECKING:
    from kafkabench.cluster.target import Target


class MonitorLab(Lab):
    name = "monitor"
    scenario = MonitorScenario
    summary = "Is my cluster delivering right now? An end-to-end probe per partition and consumer lag, for Prometheus."
    starts_workers = False  # its probe runs in this process

    def check(self, scenario: MonitorScenario) -> None:
        for pattern in scenario.groups:
            try:
                re.compile(pattern)
            except re.error as exc:
                raise ConfigError(f"--groups {pattern!r}: not a regular expression ({exc})") from None

    def without_cluster(self, scenario: MonitorScenario) -> list[str] | None:
        if scenario.write_config is None:
            return None
        from kafkabench.labs.monitor.config_files import write_config  # yaml and the dashboard: only for this

        target = f"{'127.0.0.1' if scenario.metrics_host == '0.0.0.0' else scenario.metrics_host}:{scenario.metrics_port}"
        brokers = scenario.broker_metrics or embedded_metrics()
        written = [f"wrote {path}" for path in write_config(scenario.write_config, target, broker_targets=brokers)]
        return written + [f"brokers scraped: {', '.join(brokers)}" if brokers else
                          "no broker metrics given (--broker-metrics) and no embedded cluster running: the kafka-brokers "
                          "job is empty; add your brokers' JMX exporters (jmx-exporter.yaml is their rules file)"]

    def run(self, scenario: MonitorScenario, target: Target, out_dir: Path, events: Listener) -> ResultDocument:
        from kafkabench.labs.monitor.run import run_monitor

        return run_monitor(scenario, target, out_dir, events)

    def tables(self, document):
        return report.tables(document)

    def lines(self, document):
        return report.lines(document)

    def headline(self, document):
        return report.headline(document)

    def run_label(self, run: Run) -> str:
        return f"probes through {run.params.get('probe_topic', '')}"


LABS = (MonitorLab(),)


def embedded_metrics() -> list[str]:
    """The metrics addresses of the running embedded cluster's nodes (none when no state file is found)."""
    from kafkabench.cluster.embedded import default_cluster_dir
    from kafkabench.cluster.state import load_state

    state = load_state(default_cluster_dir())
    return [f"{node.host}:{node.metrics_port}" for node in state.nodes if node.metrics_port] if state else []

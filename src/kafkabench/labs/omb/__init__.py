"""The OMB lab: OpenMessaging Benchmark's workload and Kafka driver files run as they are, on kafkabench's clients
and clusters, with OMB's result file written beside kafkabench's."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from kafkabench.core.events import Listener
from kafkabench.core.results import ResultDocument, Run
from kafkabench.labs.base import Lab
from kafkabench.labs.omb import report
from kafkabench.labs.omb.scenario import OmbScenario

if TYPE_CHECKING:
    from kafkabench.cluster.target import Target


class OmbLab(Lab):
    name = "omb"
    scenario = OmbScenario
    summary = "Run OpenMessaging Benchmark workload files as they are; write OMB's result file beside kafkabench's."

    def check(self, scenario: OmbScenario) -> None:
        from kafkabench.core.events import SILENT
        from kafkabench.labs.omb.run import check_omb

        check_omb(scenario, SILENT)

    def brokers_for(self, scenario: OmbScenario) -> int:
        from kafkabench.labs.omb.workload import load_driver

        return max(self.brokers, load_driver(scenario.driver).replication_factor if scenario.driver else 1)

    def compared_runs(self, scenario: OmbScenario) -> tuple[str, ...]:
        return ("produce", "consume")

    def run(self, scenario: OmbScenario, target: Target, out_dir: Path, events: Listener) -> ResultDocument:
        from kafkabench.labs.omb.run import run_omb

        return run_omb(scenario, target, out_dir, events)

    def tables(self, document):
        return [report.summary_table(document)]

    def headline(self, document):
        return report.headline(document)

    def lines(self, document):
        return report.lines(document)

    def run_label(self, run: Run) -> str:
        return report.run_label(run)


LABS = (OmbLab(),)

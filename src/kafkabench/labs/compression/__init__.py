"""The compression lab (seed 002): format x codec (x level), stored and wire bytes, time, producer and broker
CPU, read-and-decode rate, and the Pareto front over them."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from kafkabench.core.events import Listener
from kafkabench.core.results import ResultDocument, Run
from kafkabench.labs.base import Lab
from kafkabench.labs.compression import report
from kafkabench.labs.compression.scenario import CompressionScenario

if TYPE_CHECKING:
    from kafkabench.cluster.target import Target


class CompressionLab(Lab):
    name = "compression"
    scenario = CompressionScenario
    summary = "Store the same rows with every format and codec: stored and wire bytes, time, producer and broker CPU."

    def check(self, scenario: CompressionScenario) -> None:
        from kafkabench.labs.compression.run import check_request

        check_request(scenario)

    def run(self, scenario: CompressionScenario, target: Target, out_dir: Path, events: Listener) -> ResultDocument:
        from kafkabench.labs.compression.run import run_compression

        return run_compression(scenario, target, out_dir, events)

    def tables(self, document):
        return [report.absolute_table(document), report.ratio_table(document)]

    def headline(self, document):
        return report.headline(document)

    def lines(self, document):
        return report.winners(document)

    def run_label(self, run: Run) -> str:
        return report.label(run)

    def annotate(self, document, entry):
        report.annotate(document, entry)

    def charts(self, entry):
        from kafkabench.labs.compression import charts

        return [charts.pareto_chart(entry)]


LABS = (CompressionLab(),)

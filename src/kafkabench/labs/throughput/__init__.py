"""The throughput lab (seed 001): producers and consumers at full speed or an open-loop rate, latency under
load measured without coordinated omission, Apache's own perf tools beside them on request."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from kafkabench.core.events import SILENT, Listener
from kafkabench.core.results import ResultDocument, Run
from kafkabench.labs import broker_phases
from kafkabench.labs.base import Lab
from kafkabench.labs.throughput import report
from kafkabench.labs.throughput.scenario import ConsumeScenario, ProduceScenario

if TYPE_CHECKING:
    from kafkabench.cluster.target import Target


class _StreamingLab(Lab):
    def check(self, scenario) -> None:
        from kafkabench.labs.throughput.plan import plan_throughput

        plan_throughput(scenario, SILENT)

    def run(self, scenario, target: Target, out_dir: Path, events: Listener) -> ResultDocument:
        from kafkabench.labs.throughput.run import run_throughput

        return run_throughput(scenario, target, out_dir, events)

    def tables(self, document):
        return [report.summary_table(document)]

    def headline(self, document):
        return report.headline(document)

    def lines(self, document):
        return report.definitions(document) + [line for run in document.runs if "broker_phases" in run.params
                                                for line in broker_phases.text(run.client, run.params["broker_phases"])]

    def run_label(self, run: Run) -> str:
        return f"{run.scenario} {run.client}"

    def summary_charts(self, entries):
        if len(entries) < 2:
            return []
        from kafkabench.report import charts

        return [charts.across(f"{self.name}-summary", f"{self.name}: records/s per result", "records/s", entries,
                              lambda run: run["throughput"].get("records_per_s"), lambda run: run["label"])]


class ProduceLab(_StreamingLab):
    name = "produce"
    scenario = ProduceScenario
    summary = "Produce records as fast as allowed (open loop at --rate), with publish latency, delay and e2e under load."

    def compared_runs(self, scenario: ProduceScenario) -> tuple[str, ...]:
        return ("produce", "consume") if scenario.consumers else ("produce",)


class ConsumeLab(_StreamingLab):
    name = "consume"
    scenario = ConsumeScenario
    summary = ("Read a topic in a group: records/s, MB/s, rebalance time, time to the first record, e2e from stamped "
               "records.")


LABS = (ProduceLab(), ConsumeLab())

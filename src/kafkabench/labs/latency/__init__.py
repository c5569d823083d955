"""The latency lab (seed 000): end-to-end latency of one large payload, every client side by side, against
HTTP and the raw TCP floor."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from kafkabench.core.events import SILENT, Listener
from kafkabench.core.results import ResultDocument
from kafkabench.labs import broker_phases
from kafkabench.labs.base import Lab
from kafkabench.labs.latency import report
from kafkabench.labs.latency.scenario import LatencyScenario

if TYPE_CHECKING:
    from kafkabench.cluster.target import Target


class LatencyLab(Lab):
    name = "latency"
    scenario = LatencyScenario
    summary = "Ping-pong one large message at a time through Kafka with each client, and through HTTP and raw TCP."

    def compared_runs(self, scenario: LatencyScenario) -> tuple[str, ...]:
        return ("ping_pong",)

    def check(self, scenario: LatencyScenario) -> None:
        from kafkabench.labs.latency.session import plan_latency

        plan_latency(scenario, SILENT)

    def run(self, scenario: LatencyScenario, target: Target, out_dir: Path, events: Listener) -> ResultDocument:
        from kafkabench.labs.latency.session import run_latency

        return run_latency(scenario, target, out_dir, events)

    def tables(self, document):
        return [report.latency_table(document)]

    def headline(self, document):
        return report.headline(document)

    def lines(self, document):
        return [line for run in document.runs if "broker_phases" in run.params
                for line in broker_phases.text(run.client, run.params["broker_phases"])]

    def annotate(self, document, entry):
        entry["floor_p50_ms"] = report.floor_p50(document)
        entry["spectrum_one_metric"] = True  # e2e, produce and consume per client: one at a time

    def charts(self, entry):
        from kafkabench.labs.latency import charts  # plotly loads only when a report is drawn

        return [charts.latency_bars_chart(entry), charts.latency_split_chart(entry), charts.e2e_path_chart(entry)]

    def summary_charts(self, entries):
        from kafkabench.labs.latency import charts

        return charts.summary_charts(entries)


LABS = (LatencyLab(),)

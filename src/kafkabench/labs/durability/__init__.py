"""The durability lab (seed 003): what partitions, replication, min.insync.replicas, acks and idempotence
cost in throughput and latency on a 3-broker cluster, each cell repeated in shuffled order."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from kafkabench.core.events import Listener
from kafkabench.core.results import ResultDocument, Run
from kafkabench.labs.base import Lab
from kafkabench.labs.durability import report
from kafkabench.labs.durability.scenario import DurabilityScenario

if TYPE_CHECKING:
    from kafkabench.cluster.target import Target


class DurabilityLab(Lab):
    name = "durability"
    scenario = DurabilityScenario
    summary = "What replication, min.insync.replicas, acks and idempotence cost: every cell repeated in shuffled order."
    brokers = 3
    controllers = 1  # brokers can then go down without the quorum: ISR shrink and NOT_ENOUGH_REPLICAS as in production

    def check(self, scenario: DurabilityScenario) -> None:
        from kafkabench.labs.durability.run import check_request

        check_request(scenario)

    def network(self, scenario: DurabilityScenario) -> str:
        return "isolated" if scenario.probes_availability and "partition" in scenario.availability_faults else "loopback"

    def run(self, scenario: DurabilityScenario, target: Target, out_dir: Path, events: Listener) -> ResultDocument:
        from kafkabench.labs.durability.run import run_durability

        return run_durability(scenario, target, out_dir, events)

    def tables(self, document):
        return report.tables(document)

    def headline(self, document):
        return report.headline(document)

    def lines(self, document):
        return report.lines(document)

    def run_label(self, run: Run) -> str:
        return f"{run.params.get('cell', run.client)} r{run.params.get('repeat', '')} {run.scenario}"

    def annotate(self, document, entry):
        report.annotate(document, entry)

    def charts(self, entry):
        from kafkabench.labs.durability import charts

        return [charts.cost_chart(entry)]


LABS = (DurabilityLab(),)

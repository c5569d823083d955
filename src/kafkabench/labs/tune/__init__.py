"""The tune lab: `kafkabench tune latency` finds, by measuring, the client settings that give the lowest e2e
latency at a rate within the SLOs (`throughput`: the most records/s; `pareto`: the front of e2e p99 against
records/s), and recommends them only where they beat the default beyond noise."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from kafkabench.core.events import Listener
from kafkabench.core.results import ResultDocument, Run
from kafkabench.labs.base import Lab
from kafkabench.labs.tune import report
from kafkabench.labs.tune.scenario import TuneScenario
from kafkabench.report.definitions import Definition

if TYPE_CHECKING:
    from kafkabench.cluster.target import Target


class TuneLab(Lab):
    name = "tune"
    scenario = TuneScenario
    summary = ("Find the client settings that meet a goal on this payload and cluster, by measuring: "
               "tune latency --rate 30 --slo p99=100ms.")
    definitions = (
        Definition("tune_objective", "objective", "ms",
                   "The e2e percentile the tune minimises (--objective), over the trial's measured seconds, with its "
                   "95 % interval (a bootstrap over the measured windows).", ("tune",)),
        Definition("tune_verdict", "verdict", "",
                   "A trial meets every check when the rate was achieved, no send failed, lag did not grow and every "
                   "SLO holds at the upper end of its interval; a refused trial never ran (the client would refuse "
                   "its settings, or they cannot carry the payload).", ("tune",)),
        Definition("tune_change", "change", "%",
                   "The finalist's median objective over its re-runs against the default's, with the bootstrap "
                   "interval of the change; called an improvement only when compare's permutation test, the "
                   "interval and the 5 % minimum effect agree.", ("tune",)),
    )

    def check(self, scenario: TuneScenario) -> None:
        from kafkabench.labs.tune.run import check_tune

        check_tune(scenario)

    def run(self, scenario: TuneScenario, target: Target, out_dir: Path, events: Listener) -> ResultDocument:
        from kafkabench.labs.tune.run import run_tune

        return run_tune(scenario, target, out_dir, events)

    def tables(self, document):
        tables = (report.trials_table(document), report.final_table(document), report.front_table(document))
        return [t for t in tables if t is not None]

    def headline(self, document):
        return report.headline(document)

    def lines(self, document):
        return report.lines(document)

    def charts(self, entry):
        from kafkabench.labs.tune import charts

        return [chart for chart in (charts.trials_chart(entry), charts.front_chart(entry)) if chart is not None]

    def run_label(self, run: Run) -> str:
        return f"{run.scenario} {run.params.get('trial')}"


LABS = (TuneLab(),)

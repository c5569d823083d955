"""The capacity lab: the highest rate a cluster and a client sustain within latency objectives (`max-rate`), and the
latency-vs-rate curve (`max-rate --sweep`); and how fast a backlog drains (`backlog`)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from kafkabench.core.events import SILENT, Listener
from kafkabench.core.results import ResultDocument, Run
from kafkabench.labs.base import Lab
from kafkabench.labs.capacity import report
from kafkabench.labs.capacity.scenario import BacklogScenario, MaxRateScenario
from kafkabench.report.definitions import Definition

if TYPE_CHECKING:
    from kafkabench.cluster.target import Target


class MaxRateLab(Lab):
    name = "max-rate"
    scenario = MaxRateScenario
    summary = ("The highest records/s sustained within latency SLOs (--slo p99=50ms): a geometric search, bisection, "
               "a hold to confirm; --sweep: the latency-vs-rate curve.")
    definitions = (
        Definition("capacity_offered", "offered/s", "records/s",
                   "The step's rate on the producers' open-loop schedule (all producers together); unpaced for the "
                   "probe.", ("max-rate",)),
        Definition("capacity_achieved", "achieved/s", "records/s",
                   "Records acknowledged in the step's measured seconds over their span. A step passes only at 98 % "
                   "of the offered rate or more.", ("max-rate",)),
        Definition("capacity_lag_slope", "lag ms/s", "ms per second",
                   "How fast consumer lag grows: the least-squares slope, over the measured windows, of each window's "
                   "median e2e (how old a record is when it is read, from its intended send time). A step fails when "
                   "the slope is above 20 ms per second and its 95 % interval above 0.", ("max-rate",)),
        Definition("capacity_verdict", "verdict", "",
                   "pass when the rate was achieved, no send failed, lag did not grow and every SLO holds at the "
                   "upper end of its percentile's 95 % interval (a bootstrap over the measured windows).",
                   ("max-rate",)),
    )

    def check(self, scenario: MaxRateScenario) -> None:
        from kafkabench.labs.capacity.run import check_max_rate

        check_max_rate(scenario, SILENT)

    def brokers_for(self, scenario: MaxRateScenario) -> int:
        return max(self.brokers, scenario.replication_factor)

    def network(self, scenario: MaxRateScenario) -> str:
        return "isolated" if scenario.faults else "loopback"

    def run(self, scenario: MaxRateScenario, target: Target, out_dir: Path, events: Listener) -> ResultDocument:
        from kafkabench.labs.capacity.run import run_max_rate

        return run_max_rate(scenario, target, out_dir, events)

    def tables(self, document):
        return [report.steps_table(document)]

    def headline(self, document):
        return report.headline(document)

    def lines(self, document):
        return report.lines(document)

    def run_label(self, run: Run) -> str:
        return f"step {run.params.get('step')} {run.scenario} {run.params.get('offered_rate', 0):,.0f}/s"

    def annotate(self, document, entry):
        from kafkabench.labs.capacity import charts

        charts.annotate(document, entry)

    def charts(self, entry):
        from kafkabench.labs.capacity import charts

        return [charts.rate_chart(entry)]


class BacklogLab(Lab):
    name = "backlog"
    scenario = BacklogScenario
    summary = ("How fast consumers drain a backlog (--backlog 2GB built while they are away) with producers still "
               "sending at --rate: drain time, catch-up rate, publish latency before and during.")

    def check(self, scenario: BacklogScenario) -> None:
        from kafkabench.labs.capacity.backlog import check_backlog

        check_backlog(scenario, SILENT)

    def run(self, scenario: BacklogScenario, target: Target, out_dir: Path, events: Listener) -> ResultDocument:
        from kafkabench.labs.capacity.backlog import run_backlog

        return run_backlog(scenario, target, out_dir, events)

    def tables(self, document):
        return [report.phases_table(document)]

    def headline(self, document):
        return report.backlog_headline(document)

    def lines(self, document):
        return [*super().lines(document), report.backlog_headline(document)]

    def run_label(self, run: Run) -> str:
        return run.scenario


LABS = (MaxRateLab(), BacklogLab())

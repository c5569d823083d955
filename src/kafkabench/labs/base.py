"""The lab interface (OpenMessaging Benchmark's driver SPI, in spirit): everything a plan, the runner, the
CLI and the report need from a lab, so adding a lab is adding its own files and one registry line.

A lab provides its name, its scenario model (the CLI's request and a plan's scenario at once), `check`
(everything that can be refused before a cluster starts), `run` (which writes the result directory and
returns its document, or raises `LabFailed` carrying the partial one) and its report parts: the table
models, the headline, the explanations under the tables, how a run is named, and its charts. Every report
part has a default that works for any result, so a new lab is never left out of a report.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from kafkabench.core.events import Listener
from kafkabench.core.results import ResultDocument, Run
from kafkabench.errors import KafkabenchError
from kafkabench.labs.scenario import Scenario
from kafkabench.report.definitions import Definition

if TYPE_CHECKING:
    from kafkabench.cluster.target import Target
    from kafkabench.report.table import Table


class LabFailed(KafkabenchError):
    """A run ended early; `document` is the partial result, already written to the result directory. `kind`:
    failure, timeout, integrity, or config (a client refused its settings; the message is its own)."""

    def __init__(self, message: str, document: ResultDocument, kind: str = "failure") -> None:
        super().__init__(message)
        self.document = document
        self.kind = kind


class Lab:
    name: ClassVar[str] = ""
    scenario: ClassVar[type[Scenario]] = Scenario
    summary: ClassVar[str] = ""  # one line: the command's help
    brokers: ClassVar[int] = 1  # the embedded cluster started for it when none runs
    starts_workers: ClassVar[bool] = True  # its clients run as workers (core.launcher): it takes --launcher
    controllers: ClassVar[int] = 0  # and its dedicated controller nodes (0: combined broker+controller nodes)
    definitions: ClassVar[tuple[Definition, ...]] = ()  # its own metrics' meanings, beside report.definitions'

    # ---- running -----------------------------------------------------------------------------

    def check(self, scenario: Scenario) -> None:
        """Raise ConfigError for anything that can be refused before a cluster is started."""

    def brokers_for(self, scenario: Scenario) -> int:
        """The brokers of the embedded cluster started for it when none runs (`brokers`, unless the scenario needs more)."""
        return self.brokers

    def network(self, scenario: Scenario) -> str:
        """The network of the embedded cluster started for it when none runs: "isolated" when the scenario asks for
        network faults (see `cluster.network`), else "loopback"."""
        return "loopback"

    def without_cluster(self, scenario: Scenario) -> list[str] | None:
        """What the scenario asks that needs no cluster (the monitor's --write-config): done here, its lines printed,
        and nothing else runs. None: run as usual."""
        return None

    def compared_runs(self, scenario: Scenario) -> tuple[str, ...]:
        """The kinds of runs (their workers' scenarios) a result of this scenario holds for each client: what a plan's
        cost table compares, counted before the plan runs. Default: one run named after the lab."""
        return (self.name,)

    def run(self, scenario: Scenario, target: Target, out_dir: Path, events: Listener) -> ResultDocument:
        raise NotImplementedError(f"lab {self.name} cannot run")

    # ---- report parts (from result files only) ------------------------------------------------

    def tables(self, document: ResultDocument) -> list[Table]:
        from kafkabench.report.table import runs_table

        return [runs_table(document, self.run_label)]

    def headline(self, document: ResultDocument) -> str:
        """One line a person wants first; empty when a partial result has nothing to say."""
        return ""

    def lines(self, document: ResultDocument) -> list[str]:
        """Explanations printed under the tables, worded the same in the terminal and the report."""
        return [f"{run.client}: {run.error}" for run in document.runs if run.error]

    def run_label(self, run: Run) -> str:
        return run.client

    def annotate(self, document: ResultDocument, entry: dict) -> None:
        """Add what this lab's charts need to the report's entry of a result (a plain dict)."""

    draws_timeline = False  # its charts draw the runs' timelines themselves: the report's own is left out

    def charts(self, entry: dict) -> list[dict]:
        """Charts of one result beyond the ones every result gets (percentile spectrum, timeline)."""
        return []

    def summary_charts(self, entries: list[dict]) -> list[dict]:
        """Charts across several results of this lab (a plan's profiles and repeats)."""
        return []

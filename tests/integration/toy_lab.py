"""A lab that exists only in the tests: it times metadata requests. Registering it is all it takes for a plan,
`kafkabench run`, the report and the CSV to carry it - the proof that a lab is a plug-in."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Literal

from pydantic import Field, PositiveFloat, PositiveInt

from kafkabench.admin import KafkaAdmin
from kafkabench.cluster.target import Target
from kafkabench.core.events import Listener
from kafkabench.core.histogram import LatencyHistogram
from kafkabench.core.results import ResultDocument, Run, stats_from, write_result
from kafkabench.labs.base import Lab
from kafkabench.labs.document import new_document
from kafkabench.labs.scenario import Scenario


class ToyScenario(Scenario):
    lab: Literal["toy"] = "toy"
    count: PositiveInt = Field(20, description="Metadata requests to time.")
    timeout: PositiveFloat = Field(10, description="Seconds one request may take.")


class ToyLab(Lab):
    name = "toy"
    scenario = ToyScenario
    summary = "Time metadata requests, one after another."

    def run(self, scenario: ToyScenario, target: Target, out_dir: Path, events: Listener) -> ResultDocument:
        histogram = LatencyHistogram()
        with KafkaAdmin(target.bootstrap_servers, timeout_s=scenario.timeout) as admin:
            for done in range(1, scenario.count + 1):
                started = time.monotonic_ns()
                admin.brokers()
                histogram.record_ns(time.monotonic_ns() - started)
                events.progress(done, scenario.count, "metadata")
        document = new_document(self.name, target, {"count": scenario.count})
        document.runs = [Run(client="admin", scenario="metadata", stats=stats_from({"metadata": histogram}),
                             counters={"requests": scenario.count})]
        write_result(document, out_dir, [{"metadata": histogram.encode()}])
        return document

    def headline(self, document: ResultDocument) -> str:
        return f"metadata p50 {document.runs[0].stats['metadata'].p50_ms:.3f} ms"

"""The OMB lab's run: each workload file in turn, as mapping.py maps it, its windows kept as they come, and OMB's
result file written beside kafkabench's (`<workload>-<driver>-<time>.json`, OMB's own name)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from kafkabench.cluster.target import Target
from kafkabench.core.events import Events, Listener
from kafkabench.core.results import ResultDocument
from kafkabench.core.timeline import TimelineEntry
from kafkabench.errors import ConfigError
from kafkabench.labs.base import LabFailed
from kafkabench.labs.document import new_document
from kafkabench.labs.omb.mapping import (Mapped, checked_scenario, mapped, payload_source, produce_scenario,
                                         randomized_payloads)
from kafkabench.labs.omb.result import omb_result, result_name
from kafkabench.labs.omb.scenario import OmbScenario
from kafkabench.labs.omb.workload import DEFAULT_DRIVER, KafkaDriver, Workload, load_driver, load_workload
from kafkabench.labs.throughput.plan import plan_throughput
from kafkabench.labs.throughput.run import run_throughput


@dataclass
class Loaded:
    file: Path
    workload: Workload
    mapped: Mapped


def load_all(scenario: OmbScenario) -> tuple[KafkaDriver, list[Loaded]]:
    """Every file read and every workload mapped and checked, before anything starts."""
    driver = load_driver(scenario.driver) if scenario.driver else DEFAULT_DRIVER
    loaded = []
    for path in scenario.workloads:
        workload = load_workload(path)
        if workload.producer_rate == 0 or workload.consumer_backlog_size_gb:
            raise ConfigError(_not_yet(path, workload))
        payload_source(workload, path)
        loaded.append(Loaded(path, workload, mapped(workload, scenario.driver and driver, scenario)))
    return driver, loaded


def _not_yet(path: Path, workload: Workload) -> str:
    field = "producerRate: 0" if workload.producer_rate == 0 else "consumerBacklogSizeGB"
    return (f"OMB workload {path}: {field} is not run by `kafkabench omb` yet; run `kafkabench "
            f"{'max-rate' if workload.producer_rate == 0 else 'backlog'}` with the workload's shape instead")


def check_omb(scenario: OmbScenario, listener: Listener) -> None:
    for item in load_all(scenario)[1]:
        plan_throughput(checked_scenario(item.mapped), listener)


def run_omb(scenario: OmbScenario, target: Target, out_dir: Path, listener: Listener) -> ResultDocument:
    driver, loaded = load_all(scenario)
    out_dir.mkdir(parents=True, exist_ok=True)
    document = new_document("omb", target, {"driver": driver.name, "driver_file": str(scenario.driver or ""),
                                            "client": scenario.client, "workloads": [], "omb_results": []})
    for item in loaded:
        name = item.file.stem
        listener.note(f"workload {name}: {item.workload.name or ''}".rstrip(": "))
        for line in item.mapped.notes:
            listener.note(line)
            document.notes.append(f"{name}: {line}")
        windows = _Windows()
        payloads = ([payload_source(item.workload, item.file)] if not item.workload.use_randomized_payloads else
                    randomized_payloads(item.workload, out_dir / name / "payloads"))
        started = datetime.now()
        try:
            produced = run_throughput(produce_scenario(item.mapped, payloads), target, out_dir / name,
                                      Events(listener, windows))
        except LabFailed as failed:
            document.runs.extend(_tagged(failed.document.runs if failed.document else [], name))
            document.error = f"workload {name}: {failed}"
            raise LabFailed(document.error, document, failed.kind) from None
        document.runs.extend(_tagged(produced.runs, name))
        result = omb_result(item.workload.name or name, driver.name, item.workload, windows.entries["produce"],
                            windows.entries.get("consume", []))
        path = out_dir / result_name(item.file, driver.name, started)
        path.write_text(json.dumps(result, indent=2), encoding="utf-8")
        document.params["workloads"].append({"file": str(item.file), "name": item.workload.name, **item.workload.model_dump(
            by_alias=True, exclude={"name"})})
        document.params["omb_results"].append(path.name)
        listener.note(f"OMB's result: {path}")
    return document


def _tagged(runs: list, workload: str) -> list:
    for run in runs:
        run.params = {**run.params, "workload": workload}
    return runs


class _Windows(Listener):
    """Every window of each role as the run merges them, their histograms inside."""

    def __init__(self) -> None:
        self.entries: dict[str, list[TimelineEntry]] = {}

    def window(self, role: str, entry: TimelineEntry) -> None:
        self.entries.setdefault(role, []).append(entry)

"""The OMB lab's run: each workload file in turn, as mapping.py maps it, its windows kept as they come, and OMB's
result file written beside kafkabench's (`<workload>-<driver>-<time>.json`, OMB's own name)."""

from __future__ import annotations

import json
import shutil
import uuid
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from kafkabench.cluster.target import Target
from kafkabench.core.events import Events, Listener
from kafkabench.core.protocol import RECORD_TIME
from kafkabench.core.results import ResultDocument, Run, move_histograms, write_result
from kafkabench.core.timeline import TimelineEntry
from kafkabench.errors import ConfigError, KafkabenchError
from kafkabench.labs.base import LabFailed
from kafkabench.labs.capacity.backlog import check_backlog, run_backlog
from kafkabench.labs.capacity.run import check_max_rate, run_max_rate
from kafkabench.labs.document import new_document
from kafkabench.labs.omb.cluster_times import cluster_times
from kafkabench.labs.omb.mapping import (Mapped, backlog_scenario, mapped, max_rate_scenario,
                                         payload_source, produce_scenario, randomized_payloads)
from kafkabench.labs.omb.report import cluster_times_text
from kafkabench.labs.omb.result import omb_result, result_name
from kafkabench.labs.omb.room import room_problem
from kafkabench.labs.omb.scenario import OmbScenario
from kafkabench.labs.omb.workload import DEFAULT_DRIVER, KafkaDriver, Workload, load_driver, load_workload
from kafkabench.labs.throughput.plan import plan_throughput
from kafkabench.labs.throughput.run import run_throughput

BUILTIN_WORKLOADS = Path(__file__).parent / "workloads"  # OMB's families scaled to a small machine (plan `omb`)


@dataclass
class Loaded:
    file: Path
    workload: Workload
    mapped: Mapped


def load_all(scenario: OmbScenario) -> tuple[KafkaDriver, list[Loaded]]:
    """Every file read and every workload mapped and checked, before anything starts."""
    driver = load_driver(scenario.driver) if scenario.driver else DEFAULT_DRIVER
    loaded = []
    for given in scenario.workloads:
        path = given if given.exists() or given.is_absolute() else BUILTIN_WORKLOADS / given.name
        workload = load_workload(path if path.exists() else given)
        payload_source(workload, path)
        item = Loaded(path, workload, mapped(workload, scenario.driver and driver, scenario))
        if workload.consumer_backlog_size_gb:
            _backlog_notes(item)
        elif workload.producer_rate == 0 and workload.subscriptions_per_topic > 1:
            item.mapped.notes.append("producerRate 0: the capacity lab searches with one subscription reading")
        loaded.append(item)
    return driver, loaded


def _backlog_notes(item: Loaded) -> None:
    """What a backlog run does not do as OMB does: refused where it would change the answer, said otherwise."""
    workload, path = item.workload, item.file
    if workload.backlog_drain_ratio < 1:
        raise ConfigError(f"OMB workload {path}: backlogDrainRatio {workload.backlog_drain_ratio:g}: kafkabench's "
                          "backlog lab drains it all (drained: the consumers' e2e p99 under a second); remove it")
    if workload.subscriptions_per_topic > 1:
        raise ConfigError(f"OMB workload {path}: consumerBacklogSizeGB with {workload.subscriptions_per_topic} "
                          "subscriptions: kafkabench's backlog lab drains with one group")
    item.mapped.notes.append("consumerBacklogSizeGB: the backlog lab builds it at producerRate, then drains it as the "
                             "producers go on, and ends once drained: the warm-up is the build's first seconds (its "
                             "records are in the backlog), no testDurationMinutes after it")


def check_omb(scenario: OmbScenario, listener: Listener) -> None:
    for item in load_all(scenario)[1]:
        if item.workload.consumer_backlog_size_gb:
            check_backlog(backlog_scenario(item.mapped, item.workload, []), listener)
        elif item.workload.producer_rate == 0:
            check_max_rate(max_rate_scenario(item.mapped, [], scenario.slo), listener)
        else:
            plan_throughput(produce_scenario(item.mapped, []), listener)


def run_omb(scenario: OmbScenario, target: Target, out_dir: Path, listener: Listener) -> ResultDocument:
    driver, loaded = load_all(scenario)
    if scenario.cluster_times:
        target.faults.controllers()  # a cluster kafkabench does not own refuses here, before anything runs
    for item in loaded:
        fields = item.mapped.fields
        if problem := room_problem(fields["topics"] * fields["partitions"], fields["replication_factor"], target,
                                   f"OMB workload {item.file}"):
            raise ConfigError(problem)
    out_dir.mkdir(parents=True, exist_ok=True)
    document = new_document("omb", target, {"driver": driver.name, "driver_file": str(scenario.driver or ""),
                                            "client": scenario.client, "workloads": [], "omb_results": []})
    for item in loaded:
        name, scratch = item.file.stem, out_dir / f".workload-{item.file.stem}"
        listener.note(f"workload {name}: {item.workload.name or ''}".rstrip(": "))
        for line in item.mapped.notes:
            listener.note(line)
            document.notes.append(f"{name}: {line}")
        windows = _Windows()
        payloads = ([payload_source(item.workload, item.file)] if not item.workload.use_randomized_payloads else
                    randomized_payloads(item.workload, scratch / "payloads"))
        started = datetime.now()
        try:
            ran, capacity = _run(item, scenario, payloads, target, scratch, listener, windows)
        except LabFailed as failed:
            _keep(document, failed.document.runs if failed.document else [], name, scratch, out_dir)
            shutil.rmtree(scratch, ignore_errors=True)
            document.error = f"workload {name}: {failed}"
            write_result(document, out_dir)
            raise LabFailed(f"{document.error}; the workloads done so far are kept in {out_dir}", document,
                            failed.kind) from None
        _keep(document, ran.runs, name, scratch, out_dir)
        shutil.rmtree(scratch, ignore_errors=True)
        result = omb_result(item.workload.name or name, driver.name, item.workload, windows.entries.get("produce", []),
                            windows.entries.get("consume", []))
        path = out_dir / result_name(item.file, driver.name, started)
        path.write_text(json.dumps(result, indent=2), encoding="utf-8")
        document.params["workloads"].append({"file": str(item.file), "name": item.workload.name,
                                             **item.workload.model_dump(by_alias=True, exclude={"name"}),
                                             "first_topic": ran.params.get("topic"),
                                             "topics_ready_s": ran.params.get("topics_ready_s"),
                                             **({"capacity": capacity} if capacity else {}),
                                             **({"e2e_compared": compared}
                                                if (compared := _e2e_compared(ran)) else {})})
        document.params["omb_results"].append(path.name)
        write_result(document, out_dir)
        listener.note(f"OMB's result: {path}")
        if scenario.cluster_times:
            _time_the_cluster(document, item, target, out_dir, listener)
    return document


def _time_the_cluster(document: ResultDocument, item: Loaded, target: Target, out_dir: Path,
                      listener: Listener) -> None:
    """The cluster's creation, failover and restart times at the workload's count, kept with the workload."""
    fields, name = item.mapped.fields, item.file.stem
    listener.note(f"workload {name}: timing the cluster at its {fields['topics'] * fields['partitions']:,} "
                  "partition(s) (creation, a controller failover, a broker restart)")
    topics = [f"kafkabench-omb-times-{uuid.uuid4().hex[:6]}-{index:05d}" for index in range(fields["topics"])]
    try:
        times = cluster_times(target, topics, fields["partitions"], fields["replication_factor"],
                              {key: setting.value for key, setting in fields["topic_config"].items()},
                              fields["timeout"] * 4)
    except KafkabenchError as exc:
        document.error = f"workload {name}: timing the cluster: {exc}"
        write_result(document, out_dir)
        raise LabFailed(f"{document.error}; the workloads done so far are kept in {out_dir}", document) from None
    document.params["workloads"][-1]["cluster_times"] = times
    write_result(document, out_dir)
    listener.note(f"workload {name}: {cluster_times_text(times)}")


def _e2e_compared(ran: ResultDocument) -> dict | None:
    """The measured phase's e2e both ways on the same records: kafkabench's (intended send time to the consumer, us)
    and OMB's (wall clock minus the record's timestamp, whole ms, samples at or below 0 dropped)."""
    consumed = next((run for run in ran.runs if run.scenario == "consume"), None)
    ours, theirs = (consumed.stats.get(metric) if consumed else None for metric in ("e2e", RECORD_TIME))
    if ours is None or theirs is None:
        return None
    figures = {name: {"p50_ms": stat.p50_ms, "p99_ms": stat.p99_ms, "max_ms": stat.max_ms, "count": stat.count}
               for name, stat in (("kafkabench", ours), ("omb_definition", theirs))}
    return {**figures, "dropped": ours.count - theirs.count}


def _keep(document: ResultDocument, runs: list[Run], workload: str, scratch: Path, out_dir: Path) -> None:
    """The workload's runs, tagged with it, their histogram files moved from its scratch directory into the lab's."""
    move_histograms(runs, scratch, out_dir, len(document.runs))
    for run in runs:
        run.params = {**run.params, "workload": workload}
    document.runs.extend(runs)


def _run(item: Loaded, scenario: OmbScenario, payloads: list[Path], target: Target, out_dir: Path,
         listener: Listener, windows: _Windows) -> tuple[ResultDocument, dict | None]:
    """The workload's run (a backlog built and drained, or a produce run at its rate or the capacity lab's answer),
    its windows kept, and for producerRate 0 what the capacity lab found: the rate, whether it held, the holds that
    failed above it."""
    events = Events(listener, windows)  # the measured run's windows only, never the capacity lab's steps
    if item.workload.consumer_backlog_size_gb:
        return run_backlog(backlog_scenario(item.mapped, item.workload, payloads), target, out_dir, events), None
    if item.workload.producer_rate:
        return run_throughput(produce_scenario(item.mapped, payloads), target, out_dir, events), None
    search = run_max_rate(max_rate_scenario(item.mapped, payloads, scenario.slo), target, out_dir / "max-rate",
                          listener)
    found = search.params.get("sustainable")
    if not found:
        raise LabFailed(f"producerRate 0: the capacity lab found no rate that met {', '.join(scenario.slo)} "
                        f"({search.params.get('stop_reason', 'see its result')})", search)
    capacity = {"records_per_s": found["records_per_s"], "slo": scenario.slo, "held": found.get("held"),
                "searches": found.get("searches"), "holds": search.params.get("hold_results")}
    listener.note(f"producerRate 0: the capacity lab's answer {found['records_per_s']:,.0f} records/s "
                  f"({', '.join(scenario.slo) or 'no slo'}; held: {found.get('held')})")
    return run_throughput(produce_scenario(item.mapped, payloads, found["records_per_s"]), target, out_dir,
                          events), capacity


class _Windows(Listener):
    """Every window of each role as the run merges them, their histograms inside."""

    def __init__(self) -> None:
        self.entries: dict[str, list[TimelineEntry]] = {}

    def window(self, role: str, entry: TimelineEntry) -> None:
        self.entries.setdefault(role, []).append(entry)

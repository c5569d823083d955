"""The durability lab's run (seed 003): every cell (topic settings x producer settings x client) produced to
its own fresh topic with a consumer alongside, repeated with the cell order shuffled per repeat.

Each cell and repeat: a fresh topic with the cell's partitions, replication factor and min.insync.replicas,
whose replication factor and min.insync.replicas are read back through the admin API (not trusted from the
request) and whose description (leader, replicas, ISR per partition) goes into the result; a warm-up sent
to it and not measured; then the throughput lab's produce run with one consumer reading alongside (e2e under
load). A client that refuses a cell's settings marks the cell refused, in its own words; a cell that fails
otherwise keeps its partial figures, the cluster is waited on until healthy, and the run goes on.
"""

from __future__ import annotations

import random
import shutil
import uuid
from pathlib import Path

from kafkabench import clients as client_registry
from kafkabench.admin import KafkaAdmin
from kafkabench.cluster.target import Target
from kafkabench.core.events import SILENT, Listener
from kafkabench.core.results import ResultDocument, Run, move_histograms, write_result
from kafkabench.errors import ConfigError, KafkabenchError
from kafkabench.labs.base import LabFailed
from kafkabench.labs.document import count_brokers, new_document
from kafkabench.labs.durability import availability
from kafkabench.labs.durability.cells import Cell, check_fits, expand, run_order
from kafkabench.labs.durability.report import PAST
from kafkabench.labs.durability.scenario import DurabilityScenario
from kafkabench.labs.topic_check import verified_topic
from kafkabench.labs.throughput.run import run_throughput
from kafkabench.labs.throughput.scenario import ProduceScenario
from kafkabench.report.family import FDR, decides_text

HEAL_S = 120  # after a failed cell: how long the cluster may take to be whole again
# a JIT compiles the send path while the measured worker itself sends the warm-up; a Python client has none
# to warm, and its warm-up (topic, brokers, page cache) runs in a worker of its own
WARMED_IN_WORKER = ("java",)
AXES = {"acks": "--acks", "enable.idempotence": "--idempotence"}  # a client setting -> the axis that sets it per cell


def check_request(scenario: DurabilityScenario) -> None:
    for client in scenario.clients:
        if client not in client_registry.KAFKA_CLIENTS:
            raise ConfigError(f"--clients {client}: the durability lab runs Kafka clients: "
                              f"{', '.join(client_registry.KAFKA_CLIENTS)}")
    for settings in (scenario.producer, scenario.overrides):
        for key, axis in AXES.items():
            if key in settings:
                raise ConfigError(f"{settings[key].source} sets {key}, which this lab sets per cell from {axis}: "
                                  f"give the values there (a setting in both places would silently lose one)")
    expand(scenario)


def run_durability(scenario: DurabilityScenario, target: Target, out_dir: Path, listener: Listener) -> ResultDocument:
    cells = expand(scenario)
    if scenario.probes_availability and not target.started_here:
        raise ConfigError(f"the availability probe stops brokers, and {target.bootstrap_servers} was not started by "
                          "kafkabench: add --no-availability, or drop --bootstrap-servers to let kafkabench start one")
    seed = scenario.seed if scenario.seed is not None else random.SystemRandom().randrange(2**32)
    out_dir.mkdir(parents=True, exist_ok=True)
    document = new_document("durability", target, {**scenario.model_dump(mode="json", exclude_none=True), "seed": seed})
    check_fits(cells, count_brokers(document, target, scenario.timeout))
    document.params["cells"] = [cell.label for cell in cells]
    if len(cells) > 1:
        listener.note(decides_text("vs fastest", len(cells) - 1, scenario.repeats, FDR, "--repeats",
                                   "the column will read cannot decide"))
    refused: dict[Cell, str] = {}
    failed: list[str] = []
    run_id = uuid.uuid4().hex[:8]
    try:
        for repeat in range(scenario.repeats):
            for position, cell in enumerate(run_order(cells, repeat, scenario.order, seed)):
                if cell in refused:
                    continue
                listener.note(f"repeat {repeat + 1}/{scenario.repeats}, cell {position + 1}/{len(cells)}: {cell.label}")
                try:
                    runs, error, kind = _run_cell(cell, scenario, target, out_dir / f".cell-{run_id}",
                                                  f"{run_id}-{repeat}-{position}")
                except KafkabenchError as exc:  # its topic could not be set up or verified: the cell failed, not the run
                    runs, error, kind = [], str(exc), "failure"
                move_histograms(runs, out_dir / f".cell-{run_id}" / "measured", out_dir, len(document.runs))
                for run in runs:  # a run's own params win: Apache's tool keeps the cell label of its own
                    run.params = {**_cell_params(cell), "repeat": repeat + 1, "position": position + 1, **run.params}
                document.runs.extend(runs)
                if kind == "config":
                    refused[cell] = error
                    document.params["refused"] = {c.label: reason for c, reason in refused.items()}
                    document.notes.append(f"{cell.label}: refused by {cell.client}: {error}")
                elif error:
                    failed.append(f"{cell.label}, repeat {repeat + 1}")
                    document.notes.append(f"{cell.label}, repeat {repeat + 1}: {error}")
                    listener.note(f"{cell.label} failed: {error}; the other cells go on")
                    _heal(target, document, listener)
                write_result(document, out_dir)
        if scenario.probes_availability:
            _probe_availability(cells, scenario, target, document, listener)
    except KeyboardInterrupt:
        document.error = "interrupted"
    except _Unhealthy as exc:
        document.error = f"{exc}; nothing after this would measure a whole cluster"
    finally:
        shutil.rmtree(out_dir / f".cell-{run_id}", ignore_errors=True)
    document.params.setdefault("refused", {})
    if failed and not document.error:
        document.error = f"{len(failed)} cell run(s) did not finish ({'; '.join(failed)}); every other cell ran"
    write_result(document, out_dir)
    if document.error:
        raise LabFailed(f"{document.error}; the cells done so far are kept in {out_dir}", document)
    return document


def _probe_availability(cells: list[Cell], scenario: DurabilityScenario, target: Target, document: ResultDocument,
                        listener: Listener) -> None:
    """Every distinct (RF, min.insync, acks) with one broker and then two down, each way the scenario asks in turn
    (paused, killed, cut off)."""
    found = {key: [cell.label for cell in members] for key, members in availability.groups(cells).items()}
    ways = ", then ".join(PAST[mode] for mode in scenario.availability_faults)
    listener.note(f"availability of {', '.join(key.label for key in found)}: one broker down, then two; {ways}")
    try:
        results = availability.probe_groups(found, target.connection, target.faults, HEAL_S, listener,
                                            scenario.availability_faults)
    except availability.ProbeFailed as exc:
        document.notes.append(f"availability: {exc}")
        return
    except KafkabenchError as exc:  # the cluster did not come back whole: nothing after this is trustworthy
        raise _Unhealthy(f"availability: {exc}") from exc
    document.params["availability"] = [result.to_dict() for result in results]
    errors = dict.fromkeys(result.error for result in results if result.error)
    document.notes += [f"availability: {error}" for error in errors]


def _cell_params(cell: Cell) -> dict:
    return {"cell": cell.label, "name": cell.name, "partitions": cell.partitions, "replication_factor": cell.replication_factor,
            "min_insync_replicas": cell.min_isr, "effective_min_isr": cell.effective_min_isr, "acks": cell.acks,
            "idempotence": "on" if cell.idempotence else "off", **({"min_isr_note": cell.min_isr_note} if cell.min_isr_note else {})}


def cell_produce(cell: Cell, scenario: DurabilityScenario, topic: str) -> ProduceScenario:
    """The throughput lab's produce run of a cell on its topic, with one consumer reading alongside."""
    return ProduceScenario(
        topic=topic, client=cell.client, count=scenario.count, duration=scenario.duration, size=scenario.size,
        rate=scenario.rate, consumers=1, partitions=cell.partitions, replication_factor=cell.replication_factor,
        producer={**scenario.producer, **cell.producer_settings()}, consumer=scenario.consumer,
        overrides=scenario.overrides, timeout=scenario.timeout,
        jit_warmup=scenario.warmup if cell.client in WARMED_IN_WORKER else 0, broker_phases=False)


def separate_warmup(produce: ProduceScenario, records: int) -> ProduceScenario:
    """A run of its own that sends `records` to the cell's topic first, measured nowhere."""
    return produce.model_copy(update={"count": records, "duration": None, "rate": -1, "consumers": 0, "jit_warmup": 0})


def _run_cell(cell: Cell, scenario: DurabilityScenario, target: Target, work_dir: Path,
              suffix: str) -> tuple[list[Run], str, str]:
    """(the cell's runs, what ended it early or '', that failure's kind)"""
    topic = f"kafkabench-durability-{suffix}"
    with KafkaAdmin(target.connection, timeout_s=scenario.timeout) as admin:
        admin.create_topic(topic, cell.partitions, cell.replication_factor, cell.topic_settings(), exist_ok=True)
        try:
            description = verified_topic(admin, topic, cell.replication_factor, cell.min_isr)
            produce = cell_produce(cell, scenario, topic)
            try:
                if scenario.warmup and not produce.jit_warmup:
                    run_throughput(separate_warmup(produce, scenario.warmup), target, work_dir / "warmup", SILENT)
                runs, error, kind = run_throughput(produce, target, work_dir / "measured", SILENT).runs, "", ""
            except ConfigError as refused:  # the client's own check of its settings, before any worker starts
                runs, error, kind = [], str(refused), "config"
            except LabFailed as failed:
                runs, error, kind = failed.document.runs, failed.document.error or str(failed), failed.kind
            if scenario.compare_apache and cell.client == "java" and not error:
                from kafkabench.labs.durability.apache import producer_performance_run

                runs.append(producer_performance_run(cell, produce, runs, target))
            for run in runs:
                run.params["topic_description"] = description
            return runs, error, kind
        finally:
            try:
                admin.delete_topic(topic)
            except KafkabenchError:
                pass


class _Unhealthy(KafkabenchError):
    """The cluster did not come back whole after a failed cell."""


def _heal(target: Target, document: ResultDocument, listener: Listener) -> None:
    """After a failed cell on a cluster kafkabench runs: bring back any broker that died or was paused, and wait
    until every broker and partition is whole."""
    if not target.started_here:
        return
    try:
        for done in target.faults.bring_back():
            document.notes.append(f"{done} after the failed cell")
            listener.note(f"{done} so the other cells run on a whole cluster")
        target.faults.wait_healthy(HEAL_S)
    except KafkabenchError as exc:
        raise _Unhealthy(str(exc)) from exc


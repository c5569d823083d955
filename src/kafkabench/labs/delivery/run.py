"""The delivery lab's run (seed 004): per cell, a fresh verified topic; a producer worker whose mode decides how it
sends and how its process ends, with broker faults fired and healed meanwhile; then the cluster healed, the
topic read back by a fresh read_committed consumer, and the producer's history judged by the exact checker.

A cell whose worker fails is still healed and judged: its history holds what the producer was told until then.
A cluster that cannot heal ends the run with the partition that stayed under its ISR named; every history
written so far is kept in the result directory (`histories/*.npz`).
"""

from __future__ import annotations

import contextlib
import dataclasses
import uuid
from pathlib import Path

from kafkabench.admin import KafkaAdmin
from kafkabench.cluster.features import level_during
from kafkabench.cluster.target import Target
from kafkabench.config.redact import redact
from kafkabench.config.translate import translate
from kafkabench.core.events import Listener
from kafkabench.core.protocol import DeliveryParams, Task, task_params
from kafkabench.core.results import ResultDocument, Run, write_result
from kafkabench.core.shares import even_shares
from kafkabench.errors import ConfigError, KafkabenchError
from kafkabench.labs.base import LabFailed
from kafkabench.labs.delivery import liveness
from kafkabench.labs.delivery.cells import DeliveryCell, cell_params, cell_settings, check_fits, expand
from kafkabench.labs.delivery.consumers import CONSUMER_DEFAULTS, coordinator, measure_consumer_cell
from kafkabench.labs.delivery.e2e_probe import drain, e2e_probe, probe_task
from kafkabench.labs.delivery.faults import FaultRun, Stage
from kafkabench.core.delivery_history import History
from kafkabench.labs.delivery.judge import HISTORY_DIR, ClusterUnhealed, judge
from kafkabench.labs.delivery.producer import drive_producers, fill_producer
from kafkabench.labs.delivery.scenario import DeliveryScenario
from kafkabench.labs.delivery.stall_bound import check_stall_bound
from kafkabench.labs.document import count_brokers, new_document
from kafkabench.labs.topic_check import fresh_topic
from kafkabench.operations import perform as operation
from kafkabench.operations.spec import OperationSpec

PRODUCER_ID = 0


def check_request(scenario: DeliveryScenario) -> None:
    expand(scenario)  # the faults' and modes' spelling is the scenario model's to check


def run_delivery(scenario: DeliveryScenario, target: Target, out_dir: Path, listener: Listener) -> ResultDocument:
    cells = expand(scenario)
    if scenario.transaction_versions and not target.started_here:
        raise ConfigError(f"--transaction-versions changes a cluster-wide feature, and {target.bootstrap_servers} was not "
                          "started by kafkabench: drop it, or drop --bootstrap-servers to let kafkabench start a cluster")
    if scenario.faults and not target.started_here:
        raise ConfigError(f"--fault stops brokers, and {target.bootstrap_servers} was not started by kafkabench: drop "
                          "--fault, or drop --bootstrap-servers to let kafkabench start a cluster it may break")
    if scenario.e2e and target.launcher.name != "local":
        raise ConfigError("--e2e reads the producers' stamps on their host's clock, and its probe runs where the "
                          f"{target.launcher.name} launcher places it: drop --e2e, or run the workers locally")
    operations = [OperationSpec.parse(text) for text in scenario.operations]
    for_good = [spec for spec in operations if spec.kind == "rolling-upgrade" and not spec.back]
    if len(cells) > 1 and (upgrade := next(iter(for_good), None)):
        raise ConfigError(f"{upgrade.label} leaves the cluster on the new release for good, so only the first of "
                          f"{len(cells)} cells would upgrade: run it with one cell (one client, one value per "
                          "setting), once per client, or in a plan whose scenario says own_cluster: true")
    operation.check(operations, target.faults, target.connection, replication_factor=max(scenario.replication_factors))
    if scenario.consuming:
        check_stall_bound(scenario, target, CONSUMER_DEFAULTS)
    out_dir.mkdir(parents=True, exist_ok=True)
    document = new_document("delivery", target, scenario.model_dump(mode="json", exclude_none=True))
    check_fits(cells, count_brokers(document, target, scenario.timeout))
    if scenario.transactions or scenario.copier:
        document.cluster["transaction_version"] = transaction_version(target, scenario.timeout)
    document.params["cells"] = [cell.label for cell in cells]
    if note := _backoff_note(cells, scenario):
        document.notes.append(note)
        listener.note(note)
    run_id = uuid.uuid4().hex[:8]
    try:
        for index, cell in enumerate(cells):
            listener.note(f"cell {index + 1}/{len(cells)}: {cell.describe(scenario.planned, scenario.bounces)} "
                          f"({cell.client})")
            topic = f"kafkabench-delivery-{run_id}-{index}"
            run = Run(client=cell.client, scenario="delivery", params=cell_params(cell, scenario))
            document.runs.append(run)
            try:
                with level_during(target.connection, "transaction.version", cell.transaction_version, scenario.timeout):
                    (measure_consumer_cell if cell.consuming else measure_cell)(run, cell, scenario, target, topic,
                                                                                out_dir, index)
            except ClusterUnhealed:
                raise
            except ConfigError as refused:  # the client's own check of the cell's settings
                refuse(run, str(refused))
            except KafkabenchError as exc:  # its topic, worker or read-back failed: the cell failed, not the run
                run.error = run.error or str(exc)
            for event in run.params.get("faults", []):
                if event["fired_s"] is None:
                    document.notes.append(f"{cell.label}: {event['fault']} {event['error']}")
                    listener.note(document.notes[-1])
            if run.params.get("refused"):
                listener.note(f"{cell.label}: {run.error}")
            elif run.error:
                listener.note(f"{cell.label} failed: {run.error}; the other cells go on")
            write_result(document, out_dir)
            if scenario.compare_apache and _first_of_its_settings(cells, index):
                from kafkabench.labs.delivery.apache import verifiable_producer_run

                listener.note(f"Apache VerifiableProducer: {cell.describe(scenario.planned, scenario.bounces)}")
                document.runs.append(verifiable_producer_run(cell, scenario, target, f"{topic}-apache", out_dir,
                                                             len(document.runs)))
                write_result(document, out_dir)
    except KeyboardInterrupt:
        document.error = "interrupted"
        if scenario.faults or any(OperationSpec.parse(text).restarts for text in scenario.operations):
            # no broker of a cluster that goes on running is left down
            try:
                target.faults.bring_back()
            except KafkabenchError as exc:
                document.notes.append(f"after the interruption, the cluster could not be brought back: {exc}")
    except ClusterUnhealed as exc:
        document.runs[-1].error = document.error = str(exc)
    failed = [run for run in document.runs if run.error and not run.params.get("refused")]
    if failed and not document.error:
        document.error = f"{len(failed)} cell(s) did not run to the end: {failed[0].params['cell']}: {failed[0].error}"
    write_result(document, out_dir)
    if document.error:
        raise LabFailed(f"{document.error}; the results and histories so far are kept in {out_dir}", document)
    return document


def transaction_version(target: Target, timeout_s: float) -> int | str:
    """Which transaction protocol the cluster runs: its finalized `transaction.version` (2: KIP-890's transactions V2,
    a new producer epoch for every transaction; 0 or 1: the epoch kept across transactions), or why it is unknown."""
    try:
        with KafkaAdmin(target.connection, timeout_s=timeout_s) as admin:
            level = admin.feature_level("transaction.version")
    except KafkabenchError as exc:
        return f"unknown ({exc})"
    return 0 if level is None else level


def _backoff_note(cells: list[DeliveryCell], scenario: DeliveryScenario) -> str | None:
    """librdkafka retries a transactional request the coordinator answered CONCURRENT_TRANSACTIONS (the previous
    transaction's markers still being written) after retry.backoff.ms, 100 ms by default; the Java client after 20
    ms (KAFKA-5477). A copier that commits back to back waits on it: said where it applies."""
    copies = any(cell.mode == "copy" and cell.client == "confluent" for cell in cells)
    given = any("retry.backoff.ms" in found for found in (scenario.producer, scenario.overrides))
    if not copies or given:
        return None
    return ("confluent's copier: librdkafka waits retry.backoff.ms (100 ms) before asking again when the coordinator "
            "answers CONCURRENT_TRANSACTIONS, which back-to-back transactions meet often (the Java client waits 20 ms); "
            "-X retry.backoff.ms=5 measures it without that wait")


def _first_of_its_settings(cells: list[DeliveryCell], index: int) -> bool:
    """Apache's producer has one mode and one client: it runs once per topic and producer settings."""
    def settings(cell: DeliveryCell):
        return dataclasses.replace(cell.settings, client="")

    return all(settings(cell) != settings(cells[index]) for cell in cells[:index])


def refuse(run: Run, reason: str) -> None:
    run.error = reason if reason.startswith(run.client) else f"refused by {run.client}: {reason}"
    run.params["refused"] = True


def measure_cell(run: Run, cell: DeliveryCell, scenario: DeliveryScenario, target: Target, topic: str, out_dir: Path,
                 index: int) -> None:
    settings = cell_settings(cell, scenario)
    producer = translate(cell.client, "producer", settings.values("producer"))  # a refusal is the client's own words
    run.config = {"producer": redact(producer.config), "topic": settings.values("topic")}
    if producer.not_applicable:
        run.not_applicable = {"producer": producer.not_applicable}
    cell_dir = out_dir / HISTORY_DIR / f"{index:03d}-{cell.client}"
    history_dirs = [cell_dir / f"producer-{n}" for n in range(1, scenario.producers + 1)] \
        if scenario.producers > 1 else [cell_dir]
    for history_dir in history_dirs:  # each shared as a directory: where its worker writes its history
        history_dir.mkdir(parents=True, exist_ok=True)
    s = cell.settings
    with fresh_topic(target.connection, topic, s.partitions, s.replication_factor, s.min_isr,
                     settings.values("topic"), scenario.timeout) as description:
        run.params["topic_description"] = description
        counts, rate = even_shares(scenario.count, scenario.producers), scenario.rate / scenario.producers if scenario.rate > 0 else -1
        transactional_ids = [f"{topic}-producer-{PRODUCER_ID + number}" for number in range(scenario.producers)] \
            if scenario.transactions else []  # the topic is new for each cell of each run: no other producer has them
        tasks = [Task(scenario="delivery", client=cell.client, bootstrap_servers=target.bootstrap_servers, topic=topic,
                      producer_config={**producer.config, **({"transactional.id": transactional_ids[number]}
                                                             if transactional_ids else {})},
                      timeout_s=scenario.timeout,
                      params=task_params(DeliveryParams(
                          mode=cell.worker_mode, count=count, producer=PRODUCER_ID + number, size=scenario.size,
                          singles=0 if scenario.transactions else min(scenario.singles, count), sleep_ms=cell.sleep_ms,
                          rate_per_s=float(rate), history_dir=target.launcher.share(history_dir), stamp=scenario.e2e,
                          transaction_size=scenario.transactions or 0, abort_ratio=scenario.abort_ratio)))
                 for number, (count, history_dir) in enumerate(zip(counts, history_dirs))]
        faults = FaultRun.of(scenario, target.faults, target.connection, topic, Stage(
            coordinator=coordinator(target, "transaction", transactional_ids[0]) if transactional_ids else None))
        probing = e2e_probe(probe_task(tasks[0], settings.values("consumer")), target) if scenario.e2e else \
            contextlib.nullcontext(None)
        try:
            with probing as probe:
                seen = drive_producers(tasks, cell, scenario, target, faults)
                if probe is not None:
                    drain(probe, sum(one.acked for one in seen))
            for history_dir in history_dirs:  # from the workers' nodes, when they ran on others
                target.launcher.collect(history_dir)
        finally:  # also on Ctrl-C: a fault still down is healed now
            faults.record(run)
        fill_producer(run, seen, cell)
        liveness.producer_cell(run, seen, cell.client, probe.windows if probe is not None else ())
        if probe is not None:  # a probe that failed: its error said beside its figures, the cell judged as ever
            run.params["e2e_probe"] = probe.summary()
            run.workers.extend([probe.worker] if probe.worker else [])
        if refused := next((one for one in seen if one.refused), None):
            refuse(run, refused.error)
            return
        if scenario.faults_must_fire:
            run.error = run.error or faults.shortfall()
        judge(run, target, topic, [History.open_mapped(d) for d in history_dirs], scenario.heal_timeout, s.idempotence,
              out_dir, cell_dir, index, transactions=(scenario.transactions, transactional_ids)
              if scenario.transactions else None)

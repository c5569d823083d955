"""The delivery lab's run (seed 004): per cell, a fresh verified topic; a producer worker whose mode decides how it
sends and how its process ends, with broker faults fired and healed meanwhile; then the cluster healed, the
topic read back by a fresh read_committed consumer, and the producer's history judged by the exact checker.

A cell whose worker fails is still healed and judged: its history holds what the producer was told until then.
A cluster that cannot heal ends the run with the partition that stayed under its ISR named; every history
written so far is kept in the result directory (`histories/*.npz`).
"""

from __future__ import annotations

import dataclasses
import shutil
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from kafkabench.admin import KafkaAdmin
from kafkabench.cluster.target import Target
from kafkabench.config.redact import redact
from kafkabench.config.translate import translate
from kafkabench.core.events import Listener
from kafkabench.core.protocol import DeliveryParams, Progress, Ready, Result, Start, Task, task_params
from kafkabench.core.results import ResultDocument, Run, write_result
from kafkabench.core.worker_process import WorkerFailed
from kafkabench.errors import ConfigError, KafkabenchError
from kafkabench.labs.base import LabFailed
from kafkabench.labs.delivery.cells import DeliveryCell, check_fits, expand
from kafkabench.labs.delivery.checker import Checker, Verdict
from kafkabench.labs.delivery.faults import FaultRun, FaultSpec
from kafkabench.labs.delivery.history import History
from kafkabench.labs.delivery.readback import Decode, read_spans, read_topic
from kafkabench.labs.delivery.scenario import DeliveryScenario
from kafkabench.labs.delivery import ids
from kafkabench.labs.document import new_document
from kafkabench.labs.topic_check import verified_topic

WORKER_START_S = 120
SILENCE_MARGIN_S = 30  # beyond the scenario's timeout: a worker silent this long is hung
EXIT_WAIT_S = 30  # modes that end the process: how long it may take to be gone
HISTORY_DIR = "histories"
PRODUCER_ID = 0


def check_request(scenario: DeliveryScenario) -> None:
    for fault in scenario.faults:
        FaultSpec.parse(fault)
    expand(scenario)


def run_delivery(scenario: DeliveryScenario, target: Target, out_dir: Path, listener: Listener) -> ResultDocument:
    cells = expand(scenario)
    if scenario.faults and not target.started_here:
        raise ConfigError(f"--fault stops brokers, and {target.bootstrap_servers} was not started by kafkabench: drop "
                          "--fault, or drop --bootstrap-servers to let kafkabench start a cluster it may break")
    out_dir.mkdir(parents=True, exist_ok=True)
    document = new_document("delivery", target, scenario.model_dump(mode="json", exclude_none=True))
    with KafkaAdmin(target.bootstrap_servers, timeout_s=scenario.timeout) as admin:
        document.cluster["brokers"] = len(admin.brokers())
    layout = getattr(getattr(target.faults, "cluster", None), "layout", None)
    if layout:
        document.cluster["layout"] = layout
    check_fits(cells, document.cluster["brokers"])
    document.params["cells"] = [cell.label for cell in cells]
    run_id = uuid.uuid4().hex[:8]
    try:
        for index, cell in enumerate(cells):
            listener.note(f"cell {index + 1}/{len(cells)}: {cell.describe(scenario.faults, scenario.bounces)} ({cell.client})")
            topic = f"kafkabench-delivery-{run_id}-{index}"
            run = Run(client=cell.client, scenario="delivery", params=cell_params(cell, scenario))
            document.runs.append(run)
            try:
                measure_cell(run, cell, scenario, target, topic, out_dir, index)
            except ClusterUnhealed:
                raise
            except ConfigError as refused:  # the client's own check of the cell's settings
                refuse(run, str(refused))
            except KafkabenchError as exc:  # its topic, worker or read-back failed: the cell failed, not the run
                run.error = run.error or str(exc)
            if run.params.get("refused"):
                listener.note(f"{cell.label}: {run.error}")
            elif run.error:
                listener.note(f"{cell.label} failed: {run.error}; the other cells go on")
            write_result(document, out_dir)
            if scenario.compare_apache and _first_of_its_settings(cells, index):
                from kafkabench.labs.delivery.apache import verifiable_producer_run

                listener.note(f"Apache VerifiableProducer: {cell.describe(scenario.faults, scenario.bounces)}")
                document.runs.append(verifiable_producer_run(cell, scenario, target, f"{topic}-apache", out_dir,
                                                             len(document.runs)))
                write_result(document, out_dir)
    except KeyboardInterrupt:
        document.error = "interrupted"
    except ClusterUnhealed as exc:
        document.runs[-1].error = document.error = str(exc)
    failed = [run for run in document.runs if run.error and not run.params.get("refused")]
    if failed and not document.error:
        document.error = f"{len(failed)} cell(s) did not run to the end: {failed[0].params['cell']}: {failed[0].error}"
    write_result(document, out_dir)
    if document.error:
        raise LabFailed(f"{document.error}; the results and histories so far are kept in {out_dir}", document)
    return document


def _first_of_its_settings(cells: list[DeliveryCell], index: int) -> bool:
    """Apache's producer has one mode and one client: it runs once per topic and producer settings."""
    def settings(cell: DeliveryCell):
        return dataclasses.replace(cell.settings, client="")

    return all(settings(cell) != settings(cells[index]) for cell in cells[:index])


class ClusterUnhealed(KafkabenchError):
    """After a cell, the cluster did not come back whole within the bound: nothing after it would be judged fairly."""


@dataclass
class ProducerRun:
    """What the orchestrator saw of one producer worker."""

    result: Result | None = None
    error: str | None = None
    sent: int = 0
    timeline: list[dict] = field(default_factory=list)
    exit_code: int | None = None
    exit_s: float | None = None  # result -> the process gone
    killed: bool = False
    refused: bool = False  # the worker's client refused its settings


def cell_settings(cell: DeliveryCell, scenario: DeliveryScenario):
    return scenario.settings({"producer": cell.settings.producer_settings(), "topic": cell.settings.topic_settings()})


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
    history_dir = out_dir / HISTORY_DIR / f"{index:03d}-{cell.client}"
    with KafkaAdmin(target.bootstrap_servers, timeout_s=scenario.timeout) as admin:
        admin.create_topic(topic, cell.settings.partitions, cell.settings.replication_factor, settings.values("topic"))
        try:
            run.params["topic_description"] = verified_topic(admin, topic, cell.settings.replication_factor,
                                                             cell.settings.min_isr)
            task = Task(scenario="delivery", client=cell.client, bootstrap_servers=target.bootstrap_servers, topic=topic,
                        producer_config=producer.config, timeout_s=scenario.timeout,
                        params=task_params(DeliveryParams(
                            mode=cell.worker_mode, count=scenario.count, producer=PRODUCER_ID, size=scenario.size,
                            singles=scenario.singles, sleep_ms=cell.sleep_ms, rate_per_s=float(scenario.rate),
                            history_dir=target.launcher.share(history_dir))))
            faults = fault_run(scenario, target, topic)
            seen = drive_producer(task, cell, scenario, target, faults)
            run.params["faults"] = [event.to_dict() for event in faults.stop()]
            fill_producer(run, seen, cell)
            if seen.refused:
                refuse(run, seen.error)
                return
            judge(run, target, topic, [History.open_mapped(history_dir)], scenario, cell.settings.idempotence,
                  out_dir, history_dir, index)
        finally:
            try:
                admin.delete_topic(topic)
            except KafkabenchError:
                pass


def fault_run(scenario: DeliveryScenario, target: Target, topic: str, sent=lambda: 0) -> FaultRun:
    return FaultRun([FaultSpec.parse(text) for text in scenario.faults], target.faults, target.bootstrap_servers, topic,
                    bounces=scenario.bounces, every_s=scenario.bounce_every, at_s=scenario.fault_at,
                    after=scenario.fault_after, sent=sent)


def drive_producer(task: Task, cell: DeliveryCell, scenario: DeliveryScenario, target: Target,
                   faults: FaultRun) -> ProducerRun:
    """Start the worker, fire the faults while it sends, and watch how its process ends."""
    seen = ProducerRun()
    faults.sent = lambda: seen.sent
    worker = target.launcher.start(f"delivery {cell.client} {cell.mode}", cell.client)
    try:
        worker.send(task)
        seen.result = _follow(worker, seen, scenario, faults)
        _watch_exit(worker, seen, scenario.return_wait if cell.worker_mode == "async-return" else EXIT_WAIT_S)
    except WorkerFailed as failed:
        seen.error, seen.refused = failed.reason, failed.kind == "config"
        if failed.partial is not None:
            seen.result = Result(**failed.partial.model_dump())
    finally:
        worker.stop(0 if seen.exit_code is None else 10)
    return seen


def _follow(worker, seen: ProducerRun, scenario: DeliveryScenario, faults: FaultRun) -> Result:
    worker.receive(Ready, timeout_s=WORKER_START_S)
    start = time.monotonic()
    faults.start()
    worker.send(Start())
    last_message, last_acked, last_t = start, 0, 0.0
    while True:
        message = worker.next_message(0.1)
        now = time.monotonic()
        if message is None:
            if now - last_message > scenario.timeout + SILENCE_MARGIN_S:
                raise WorkerFailed(worker.name, f"said nothing for {scenario.timeout + SILENCE_MARGIN_S:g} s", "timeout")
            continue
        last_message = now
        if isinstance(message, Result):
            return message
        if isinstance(message, Progress) and message.acked is not None:
            t = now - start
            seen.sent = message.done
            seen.timeline.append({"t_s": round(t, 3), "sent": message.done, "records": message.acked - last_acked,
                                  "records_per_s": (message.acked - last_acked) / (t - last_t) if t > last_t else 0.0})
            last_acked, last_t = message.acked, t


def _watch_exit(worker, seen: ProducerRun, wait_s: float) -> None:
    """How the process ended after its result: by itself within `wait_s` (and when), or killed."""
    begun = time.monotonic()
    seen.exit_code = worker.wait_exit(wait_s)
    seen.exit_s = round(time.monotonic() - begun, 3)
    seen.killed = seen.exit_code is None


def cell_params(cell: DeliveryCell, scenario: DeliveryScenario) -> dict:
    s = cell.settings
    return {"cell": cell.label, "settings": cell.describe(scenario.faults, scenario.bounces), "mode": cell.mode,
            "partitions": s.partitions, "replication_factor": s.replication_factor, "min_insync_replicas": s.min_isr,
            "effective_min_isr": s.effective_min_isr, "acks": s.acks, "idempotence": "on" if s.idempotence else "off",
            "count": scenario.count, "size_bytes": scenario.size, "rate": scenario.rate}


def fill_producer(run: Run, seen: ProducerRun, cell: DeliveryCell) -> None:
    result = seen.result
    if result is not None:
        run.client_version = result.client_version
        run.timings = dict(result.timings)
        if result.effective_config.get("producer"):
            run.config["producer"] = redact(result.effective_config["producer"])
        run.duration_s = run.timings.get("ms_per_event", 0.0) * run.params["count"] / 1000
    run.timeline = seen.timeline
    if seen.exit_s is not None:
        run.timings["exit_s"] = seen.exit_s
        run.params["process_end"] = process_end(cell.worker_mode, seen)
    run.error = seen.error


def process_end(mode: str, seen: ProducerRun) -> str:
    if seen.killed:
        return f"still running {seen.exit_s:g} s after its result: killed"
    how = "exited at once" if mode in ("async-exit", "async-sleep") else "ended by itself" if mode == "async-return" \
        else "closed and exited"
    return f"{how} ({seen.exit_code}) {seen.exit_s:g} s after its result"


def judge(run: Run, target: Target, topic: str, histories: list[History], scenario: DeliveryScenario,
          idempotent: bool, out_dir: Path, mapped_dir: Path | None, index: int, decode: Decode = ids.decode) -> Verdict:
    """Heal, read back, check; the history is saved compressed into the result whatever happens."""
    run.params["history"] = _keep(histories, out_dir, mapped_dir, index, run.client)
    heal(target, topic, scenario.heal_timeout)
    checker = Checker(histories, idempotent)
    for chunk in read_topic(target.bootstrap_servers, topic, decode=decode):
        checker.feed(chunk)
    misses = checker.missing()
    checker.confirm(read_spans(target.bootstrap_servers, topic, misses.spans(), decode=decode) if misses.count else ())
    verdict = checker.result()
    counts = verdict.to_dict()
    run.counters.update({name: int(value) for name, value in counts.items() if type(value) is int})
    for history in histories:
        for name, count in history.error_counts().items():
            run.counters[f"errors.{name}"] = run.counters.get(f"errors.{name}", 0) + count
    run.params.update(idempotent=idempotent, loss_confirmed=verdict.loss_confirmed, failures=verdict.failures)
    return verdict


def heal(target: Target, topic: str, timeout_s: float) -> None:
    """Every broker running and every partition of the topic back to its full ISR, or ClusterUnhealed."""
    if not target.started_here:
        return  # kafkabench did not break it and cannot mend it: the read-back says what is there
    try:
        target.faults.bring_back()
        target.faults.wait_healthy(timeout_s, [topic])
    except KafkabenchError as exc:
        raise ClusterUnhealed(f"the cluster did not heal after the cell: {exc}") from exc


def _keep(histories: list[History], out_dir: Path, mapped_dir: Path | None, index: int, client: str) -> str:
    relative = f"{HISTORY_DIR}/{index:03d}-{client}.npz"
    (out_dir / HISTORY_DIR).mkdir(parents=True, exist_ok=True)
    histories[0].save(out_dir / relative)
    if mapped_dir is not None:
        shutil.rmtree(mapped_dir, ignore_errors=True)
    return relative

"""The latency lab's run (seed 000): end-to-end latency of one large payload, every client side by side.

Each client runs in its own worker process and its own topic. After each worker's cold message and
warm-up, the clients take turns in rounds (A B C A B C ...), so drift of a shared, noisy machine hits them
all alike. A failing client ends the run: what every worker measured so far is still written.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from pathlib import Path

from kafkabench import clients as client_registry
from kafkabench.admin import KafkaAdmin
from kafkabench.cluster.target import Target
from kafkabench.config.client_settings import ClientSettings, fit_payload
from kafkabench.config.redact import redact
from kafkabench.config.translate import Translated, translate
from kafkabench.core.events import Listener
from kafkabench.core.histogram import LatencyHistogram
from kafkabench.core.launcher import Worker
from kafkabench.core.protocol import Finish, Outcome, PingPongParams, Progress, Ready, Result, Round, Task, task_params
from kafkabench.core.results import ResultDocument, Run, stats_from, write_result
from kafkabench.core.shares import even_shares
from kafkabench.core.worker_process import WorkerFailed
from kafkabench.errors import ConfigError, KafkabenchError
from kafkabench.labs.base import LabFailed
from kafkabench.labs.document import new_document
from kafkabench.labs import broker_phases
from kafkabench.labs.latency.scenario import SEED_IMAGE_BYTES, LatencyScenario
from kafkabench.labs.payload import Payload, file_sha256

WORKER_START_S = 120  # a first Java run compiles its worker and starts a JVM


@dataclass
class _ClientRun:
    client: str
    worker: Worker | None = None
    topic: str = ""
    topic_id: str = ""  # as newer clients name the topic in their requests (and the broker's request log)
    producer: Translated = field(default_factory=lambda: Translated({}))
    consumer: Translated = field(default_factory=lambda: Translated({}))
    version: str = ""
    outcome: Outcome | None = None
    error: str | None = None

    @property
    def label(self) -> str:
        return f"{self.client} {self.version}".strip()


def load_payload(scenario: LatencyScenario) -> Payload:
    if scenario.payload is None:
        # incompressible like a JPEG, and the same bytes every run
        return Payload.generated(scenario.size, seed=SEED_IMAGE_BYTES)
    return Payload.of_file(scenario.payload)


def latency_settings(scenario: LatencyScenario, payload_bytes: int) -> ClientSettings:
    # one message in flight: batching can only delay it; acks as asked (the seed used 1)
    settings = scenario.settings({"producer": {"acks": scenario.acks, "linger.ms": "0"},
                                  "consumer": {"enable.auto.commit": "false"}})
    fit_payload(settings, payload_bytes)
    return settings


def choose_clients(requested: list[str] | None, listener: Listener) -> list[str]:
    names = client_registry.check_names(requested) if requested else list(client_registry.ALL_CLIENTS)
    chosen = []
    for name in names:
        status = client_registry.availability(name)
        if status.available:
            chosen.append(name)
        else:
            listener.note(f"skipping {name}: {status.reason}")
    if not chosen:
        raise ConfigError("none of the requested clients can run here (see the reasons above)")
    return chosen


@dataclass
class LatencyPlan:
    """Everything checked before a cluster is touched: payload, settings, clients and their translated configs."""

    scenario: LatencyScenario
    payload: Payload  # made when the run writes it for its workers, not when it is checked
    settings: ClientSettings
    runs: list[_ClientRun]


def plan_latency(scenario: LatencyScenario, listener: Listener) -> LatencyPlan:
    payload = load_payload(scenario)
    settings = latency_settings(scenario, len(payload))
    for line in settings.notes:
        listener.note(f"set {line}")
    runs = [_ClientRun(name) for name in choose_clients(scenario.clients, listener)]
    for run in runs:
        if run.client in client_registry.KAFKA_CLIENTS:
            run.producer = translate(run.client, "producer", settings.values("producer"))
            run.consumer = translate(run.client, "consumer", settings.values("consumer"))
            for role, translated in (("producer", run.producer), ("consumer", run.consumer)):
                if translated.not_applicable:
                    listener.note(f"{run.client} has no {role} setting for {', '.join(translated.not_applicable)}: not applied")
    return LatencyPlan(scenario, payload, settings, runs)


def run_latency(scenario: LatencyScenario, target: Target, out_dir: Path, listener: Listener) -> ResultDocument:
    plan = plan_latency(scenario, listener)
    out_dir.mkdir(parents=True, exist_ok=True)
    payload_path = out_dir / f".payload-{uuid.uuid4().hex[:8]}.bin"
    try:
        plan.payload.write(payload_path)
        sha256 = file_sha256(payload_path)
        document = new_document("latency", target, _params(scenario, plan.payload, sha256),
                                [f"set {line}" for line in plan.settings.notes])
        with KafkaAdmin(target.connection, timeout_s=scenario.timeout) as admin:
            document.cluster["brokers"] = len(admin.brokers())
            session = _Session(plan, target, admin, payload_path, sha256, listener)
            try:
                with broker_phases.request_logging(target, admin, scenario.broker_phases) as unavailable:
                    document.error = session.measure()
            finally:
                session.clean_up()
    finally:
        payload_path.unlink(missing_ok=True)
    document.runs = [_to_run(run, document.params, plan.settings) for run in plan.runs]
    for run, planned in zip(document.runs, plan.runs):
        if scenario.broker_phases and planned.topic and "produce" in run.stats:  # a Kafka client that measured
            parts = {"error": unavailable} if unavailable else broker_phases.ping_pong(
                target, planned.topic, planned.topic_id, 1 + scenario.warmup, run.stats["produce"].count,
                run.stats["produce"].mean_ms, run.stats["e2e"].mean_ms)
            run.params = {**run.params, "broker_phases": parts}
    write_result(document, out_dir, [run.outcome.histograms if run.outcome else {} for run in plan.runs])
    if document.error:
        raise LabFailed(f"{document.error}; partial results kept in {out_dir}", document)
    return document


class _Session:
    """One run's workers and topics on one cluster."""

    def __init__(self, plan: LatencyPlan, target: Target, admin: KafkaAdmin, payload_path: Path, payload_sha256: str,
                 listener: Listener) -> None:
        self.plan = plan
        self.scenario = plan.scenario
        self.target = target
        self.admin = admin
        self.payload_path = payload_path
        self.payload_sha256 = payload_sha256
        self.listener = listener
        self.run_id = uuid.uuid4().hex[:8]

    def measure(self) -> str | None:
        """Start every worker, then the interleaved rounds; return the first failure, or None."""
        runs, current = self.plan.runs, None
        try:
            for current in runs:
                self._start(current)
                self.listener.progress(0, self.scenario.count, current.label)
            for count in _round_sizes(self.scenario.count, self.scenario.rounds):
                for current in runs:
                    current.worker.send(Round(count=count))
                    progress = current.worker.receive(Progress, timeout_s=count * (self.scenario.timeout + self.scenario.pause) + 30)
                    self.listener.progress(progress.done, self.scenario.count, current.label)
        except KafkabenchError as failed:  # a worker's error, or its topic or its build failing
            if isinstance(failed, WorkerFailed):
                current = next(r for r in runs if r.client == failed.worker)
                current.outcome, current.error = failed.partial, failed.reason
            else:
                current.error = str(failed)
            self._collect(skip=current)
            return f"{current.client}: {current.error}"
        except KeyboardInterrupt:
            self._collect(skip=None)
            return "interrupted"
        self._collect(skip=None)
        return next((f"{r.client}: {r.error}" for r in runs if r.error), None)

    def _start(self, run: _ClientRun) -> None:
        scenario = self.scenario
        if run.client in client_registry.KAFKA_CLIENTS:
            run.topic = f"kafkabench-latency-{self.run_id}-{run.client}"
            self.admin.create_topic(run.topic, partitions=1, replication_factor=scenario.replication_factor,
                                    config=self.plan.settings.values("topic"))
            run.topic_id = self.admin.topic_id(run.topic)
        launcher = self.target.launcher
        run.worker = launcher.start(run.client, run.client)
        run.worker.send(Task(
            scenario="ping_pong", client=run.client, bootstrap_servers=self.target.bootstrap_servers, topic=run.topic,
            producer_config=run.producer.config, consumer_config=run.consumer.config,
            payload_files=[launcher.share(self.payload_path)], payload_sha256s=[self.payload_sha256],
            warmup=scenario.warmup, timeout_s=scenario.timeout, params=task_params(PingPongParams(pause_s=scenario.pause)),
        ))
        ready = run.worker.receive(Ready, timeout_s=WORKER_START_S + (scenario.warmup + 1) * (scenario.timeout + scenario.pause))
        run.version = ready.client_version

    def _collect(self, skip: _ClientRun | None) -> None:
        """Ask every live worker for what it has measured; a worker that cannot answer keeps its error."""
        for run in self.plan.runs:
            if run is skip or run.worker is None or run.outcome is not None:
                continue
            try:
                run.worker.send(Finish())
                run.outcome = run.worker.receive(Result, timeout_s=self.scenario.timeout + 10)
                run.version = run.outcome.client_version or run.version
            except WorkerFailed as failed:
                run.outcome, run.error = failed.partial, failed.reason

    def clean_up(self) -> None:
        for run in self.plan.runs:
            if run.worker is not None:
                run.worker.stop()
            if run.topic:
                try:
                    self.admin.delete_topic(run.topic)
                except KafkabenchError:
                    pass  # the cluster may be why the run failed; the topic's name says where it came from


def _round_sizes(count: int, rounds: int) -> list[int]:
    return even_shares(count, max(1, min(rounds, count)))


def _params(scenario: LatencyScenario, payload: Payload, sha256: str) -> dict:
    return {
        "payload": str(scenario.payload) if scenario.payload else f"generated ({len(payload)} random bytes)",
        "size_bytes": len(payload),
        "payload_sha256": sha256,
        "count": scenario.count,
        "warmup": scenario.warmup,
        "rounds": len(_round_sizes(scenario.count, scenario.rounds)),
        "pause_s": scenario.pause,
        "acks": scenario.acks,
        "replication_factor": scenario.replication_factor,
        "timeout_s": scenario.timeout,
    }


def _to_run(run: _ClientRun, params: dict, settings: ClientSettings) -> Run:
    outcome = run.outcome or Outcome()
    histograms = {metric: LatencyHistogram.decode(blob) for metric, blob in outcome.histograms.items()}
    measured = histograms["e2e"].count if "e2e" in histograms else 0
    kafka = run.client in client_registry.KAFKA_CLIENTS
    return Run(
        client=run.client,
        client_version=run.version,
        scenario="ping_pong",
        params=params,
        stats=stats_from(histograms),
        throughput={"records_per_s": measured / outcome.duration_s} if outcome.duration_s else {},
        counters=outcome.counters,
        resources=outcome.resources,
        duration_s=outcome.duration_s,
        config={
            "producer": redact(outcome.effective_config.get("producer", {})),
            "consumer": redact(outcome.effective_config.get("consumer", {})),
            "topic": redact(settings.values("topic")) if kafka else {},
        },
        not_applicable={role: t.not_applicable for role, t in (("producer", run.producer), ("consumer", run.consumer)) if t.not_applicable},
        error=run.error,
    )

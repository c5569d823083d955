"""The latency lab (seed 000): end-to-end latency of one large payload, every client side by side.

Each client runs in its own worker process and its own topic. After each worker's cold message and
warm-up, the clients take turns in rounds (A B C A B C ...), so drift of a shared, noisy machine hits them
all alike. A failing client ends the run: what every worker measured so far is still written.
"""

from __future__ import annotations

import hashlib
import random
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from kafkabench import clients as client_registry
from kafkabench.admin import KafkaAdmin
from kafkabench.cluster.target import Target
from kafkabench.config.client_settings import ClientSettings, build_settings, fit_payload
from kafkabench.config.properties import Setting
from kafkabench.config.redact import redact
from kafkabench.config.translate import Translated, translate
from kafkabench.core.histogram import LatencyHistogram
from kafkabench.core.protocol import Finish, Outcome, Progress, Ready, Result, Round, Task
from kafkabench.core.results import ResultDocument, Run, stats_from, write_result
from kafkabench.core.worker_process import WorkerFailed, WorkerProcess
from kafkabench.errors import ConfigError, KafkabenchError
from kafkabench.labs.document import new_document

SEED_IMAGE_BYTES = 1_302_245  # the camera image of seed 000
WORKER_START_S = 120  # a first Java run compiles its worker and starts a JVM


@dataclass
class LatencyRequest:
    size: int = SEED_IMAGE_BYTES
    payload_file: Path | None = None
    count: int = 200
    warmup: int = 10
    rounds: int = 10
    clients: list[str] | None = None  # None: every client available here
    acks: str = "1"
    replication_factor: int = 1
    topic_config: dict[str, Setting] = field(default_factory=dict)
    producer_file: dict[str, Setting] = field(default_factory=dict)
    consumer_file: dict[str, Setting] = field(default_factory=dict)
    overrides: dict[str, Setting] = field(default_factory=dict)
    timeout_s: float = 30


class LatencyListener(Protocol):
    def note(self, message: str) -> None: ...
    def client_ready(self, client: str, version: str) -> None: ...
    def progress(self, client: str, done: int, total: int) -> None: ...


class LatencyRunFailed(KafkabenchError):
    """The run ended early; the partial result was written to `result_dir`."""

    def __init__(self, message: str, document: ResultDocument) -> None:
        super().__init__(message)
        self.document = document


@dataclass
class _ClientRun:
    client: str
    worker: WorkerProcess | None = None
    topic: str = ""
    producer: Translated = field(default_factory=lambda: Translated({}))
    consumer: Translated = field(default_factory=lambda: Translated({}))
    version: str = ""
    outcome: Outcome | None = None
    error: str | None = None


def load_payload(request: LatencyRequest) -> bytes:
    if request.payload_file is None:
        # incompressible like a JPEG, and the same bytes every run
        return random.Random(SEED_IMAGE_BYTES).randbytes(request.size)
    try:
        return request.payload_file.read_bytes()
    except FileNotFoundError:
        raise ConfigError(f"payload file {request.payload_file} does not exist") from None
    except OSError as exc:
        raise ConfigError(f"payload file {request.payload_file} cannot be read: {exc.strerror}") from None


def latency_settings(request: LatencyRequest, payload_bytes: int) -> ClientSettings:
    defaults = {
        # one message in flight: batching can only delay it; acks as asked (the seed used 1)
        "producer": {"acks": request.acks, "linger.ms": "0"},
        "consumer": {"enable.auto.commit": "false"},
    }
    settings = build_settings(defaults=defaults, producer_file=request.producer_file, consumer_file=request.consumer_file,
                              topic=request.topic_config, overrides=request.overrides)
    fit_payload(settings, payload_bytes)
    return settings


def choose_clients(requested: list[str] | None, listener: LatencyListener) -> list[str]:
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

    request: LatencyRequest
    payload: bytes
    settings: ClientSettings
    runs: list[_ClientRun]


def plan_latency(request: LatencyRequest, listener: LatencyListener) -> LatencyPlan:
    payload = load_payload(request)
    settings = latency_settings(request, len(payload))
    for line in settings.notes:
        listener.note(f"set {line}")
    runs = [_ClientRun(name) for name in choose_clients(request.clients, listener)]
    for run in runs:
        if run.client in client_registry.KAFKA_CLIENTS:
            run.producer = translate(run.client, "producer", settings.values("producer"))
            run.consumer = translate(run.client, "consumer", settings.values("consumer"))
            for role, translated in (("producer", run.producer), ("consumer", run.consumer)):
                if translated.not_applicable:
                    listener.note(f"{run.client} has no {role} setting for {', '.join(translated.not_applicable)}: not applied")
    return LatencyPlan(request, payload, settings, runs)


def run_latency(plan: LatencyPlan | LatencyRequest, target: Target, out_dir: Path, listener: LatencyListener) -> ResultDocument:
    if isinstance(plan, LatencyRequest):
        plan = plan_latency(plan, listener)
    out_dir.mkdir(parents=True, exist_ok=True)
    document = new_document("latency", target, _params(plan.request, plan.payload), plan.settings.notes)
    payload_path = out_dir / f".payload-{uuid.uuid4().hex[:8]}.bin"
    payload_path.write_bytes(plan.payload)
    try:
        with KafkaAdmin(target.bootstrap_servers, timeout_s=plan.request.timeout_s) as admin:
            document.cluster["brokers"] = len(admin.brokers())
            session = _Session(plan, target, admin, payload_path, listener)
            try:
                document.error = session.measure()
            finally:
                session.clean_up()
    finally:
        payload_path.unlink(missing_ok=True)
    document.runs = [_to_run(run, document.params, plan.settings) for run in plan.runs]
    write_result(document, out_dir, [run.outcome.histograms if run.outcome else {} for run in plan.runs])
    if document.error:
        raise LatencyRunFailed(f"{document.error}; partial results kept in {out_dir}", document)
    return document


class _Session:
    """One run's workers and topics on one cluster."""

    def __init__(self, plan: LatencyPlan, target: Target, admin: KafkaAdmin, payload_path: Path, listener: LatencyListener) -> None:
        self.plan = plan
        self.request = plan.request
        self.target = target
        self.admin = admin
        self.payload_path = payload_path
        self.listener = listener
        self.run_id = uuid.uuid4().hex[:8]

    def measure(self) -> str | None:
        """Start every worker, then the interleaved rounds; return the first failure, or None."""
        runs, current = self.plan.runs, None
        try:
            for current in runs:
                self._start(current)
                self.listener.client_ready(current.client, current.version)
            for count in _round_sizes(self.request.count, self.request.rounds):
                for current in runs:
                    current.worker.send(Round(count=count))
                    progress = current.worker.receive(Progress, timeout_s=count * self.request.timeout_s + 30)
                    self.listener.progress(current.client, progress.done, self.request.count)
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
        request = self.request
        if run.client in client_registry.KAFKA_CLIENTS:
            run.topic = f"kafkabench-latency-{self.run_id}-{run.client}"
            self.admin.create_topic(run.topic, partitions=1, replication_factor=request.replication_factor,
                                    config=self.plan.settings.values("topic"))
        run.worker = WorkerProcess(run.client, client_registry.worker_command(run.client))
        run.worker.send(Task(
            scenario="ping_pong", client=run.client, bootstrap_servers=self.target.bootstrap_servers, topic=run.topic,
            producer_config=run.producer.config, consumer_config=run.consumer.config, payload_files=[str(self.payload_path)],
            payload_sha256s=[hashlib.sha256(self.plan.payload).hexdigest()], warmup=request.warmup, timeout_s=request.timeout_s,
        ))
        ready = run.worker.receive(Ready, timeout_s=WORKER_START_S + (request.warmup + 1) * request.timeout_s)
        run.version = ready.client_version

    def _collect(self, skip: _ClientRun | None) -> None:
        """Ask every live worker for what it has measured; a worker that cannot answer keeps its error."""
        for run in self.plan.runs:
            if run is skip or run.worker is None or run.outcome is not None:
                continue
            try:
                run.worker.send(Finish())
                run.outcome = run.worker.receive(Result, timeout_s=self.request.timeout_s + 10)
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
    rounds = max(1, min(rounds, count))
    base, extra = divmod(count, rounds)
    return [base + (1 if i < extra else 0) for i in range(rounds)]


def _params(request: LatencyRequest, payload: bytes) -> dict:
    return {
        "payload": str(request.payload_file) if request.payload_file else f"generated ({len(payload)} random bytes)",
        "size_bytes": len(payload),
        "payload_sha256": hashlib.sha256(payload).hexdigest(),
        "count": request.count,
        "warmup": request.warmup,
        "rounds": len(_round_sizes(request.count, request.rounds)),
        "acks": request.acks,
        "replication_factor": request.replication_factor,
        "timeout_s": request.timeout_s,
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

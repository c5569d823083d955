"""The throughput lab (seed 001): `kafkabench produce` and `kafkabench consume`.

N producer workers (and M consumer workers) start together on one signal; each streams a progress window
every interval; their outcomes are merged into one run per role (throughput_merge). A failing worker ends
the run: the others are told to finish and what everyone measured is written.
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
from kafkabench.config.translate import translate
from kafkabench.core.protocol import Outcome, Ready, Start, Task
from kafkabench.core.results import ResultDocument, Run, stats_from, write_result
from kafkabench.core.worker_process import WorkerFailed
from kafkabench.errors import ConfigError, KafkabenchError
from kafkabench.labs import throughput_fleet as fleet
from kafkabench.labs.document import new_document
from kafkabench.labs import throughput_merge as merge

WORKER_START_S = 120
DRAIN_S = 30  # after the producers: how long consumers may take to read what was acknowledged


@dataclass
class ThroughputRequest:
    role: str  # "produce" or "consume"
    topic: str | None = None
    size: int = 100
    payload_files: list[Path] = field(default_factory=list)
    count: int | None = None
    duration_s: float | None = None
    rate: float = -1  # produce: records/s over all producers, -1 = as fast as possible
    producers: int = 1
    consumers: int = 0
    partitions: int = 1
    replication_factor: int = 1
    acks: str | None = None
    compression: str | None = None
    client: str = "confluent"
    group: str | None = None
    start_from: str = "earliest"
    check: bool = False
    topic_config: dict[str, Setting] = field(default_factory=dict)
    producer_file: dict[str, Setting] = field(default_factory=dict)
    consumer_file: dict[str, Setting] = field(default_factory=dict)
    overrides: dict[str, Setting] = field(default_factory=dict)
    interval_s: float = 1.0
    timeout_s: float = 30


class ThroughputListener(Protocol):
    def note(self, message: str) -> None: ...
    def window(self, role: str, entry: dict) -> None: ...
    def done(self, role: str, records: int) -> None: ...


class ThroughputRunFailed(KafkabenchError):
    def __init__(self, message: str, document: ResultDocument) -> None:
        super().__init__(message)
        self.document = document


@dataclass
class ThroughputPlan:
    request: ThroughputRequest
    payloads: list[bytes]
    settings: ClientSettings
    producer_config: dict
    consumer_config: dict
    not_applicable: dict[str, list[str]]

    @property
    def consumer_group(self) -> str:
        return self.settings.values("consumer")["group.id"]


def load_payloads(request: ThroughputRequest) -> list[bytes]:
    if not request.payload_files:
        return [random.Random(request.size).randbytes(request.size)]  # incompressible, the same every run
    payloads = []
    for path in request.payload_files:
        try:
            payloads.append(path.read_bytes())
        except FileNotFoundError:
            raise ConfigError(f"payload file {path} does not exist") from None
    return payloads


def plan_throughput(request: ThroughputRequest, listener: ThroughputListener) -> ThroughputPlan:
    if request.count is None and request.duration_s is None:
        raise ConfigError("give --count or --duration")
    if request.client not in client_registry.KAFKA_CLIENTS:
        raise ConfigError(f"--client {request.client}: the throughput lab runs Kafka clients: {', '.join(client_registry.KAFKA_CLIENTS)}")
    status = client_registry.availability(request.client)
    if not status.available:
        raise ConfigError(f"--client {request.client} cannot run here: {status.reason}")
    payloads = load_payloads(request)
    request.group = request.group or f"kafkabench-{uuid.uuid4().hex[:8]}"
    producer = {key: value for key, value in (("acks", request.acks), ("compression.type", request.compression)) if value}
    consumer = {"group.id": request.group, "auto.offset.reset": "latest" if request.role == "produce" else request.start_from}
    settings = build_settings(defaults={"producer": producer, "consumer": consumer}, producer_file=request.producer_file,
                              consumer_file=request.consumer_file, topic=request.topic_config, overrides=request.overrides)
    fit_payload(settings, max(len(p) for p in payloads))
    for line in settings.notes:
        listener.note(f"set {line}")
    translated = {role: translate(request.client, role, settings.values(role)) for role in ("producer", "consumer")}
    for role, t in translated.items():
        if t.not_applicable:
            listener.note(f"{request.client} has no {role} setting for {', '.join(t.not_applicable)}: not applied")
    return ThroughputPlan(request, payloads, settings, translated["producer"].config, translated["consumer"].config,
                          {role: t.not_applicable for role, t in translated.items() if t.not_applicable})


def _split(total: int | None, parts: int) -> list[int | None]:
    if total is None:
        return [None] * parts
    base, extra = divmod(total, parts)
    return [base + (1 if i < extra else 0) for i in range(parts)]


def run_throughput(plan: ThroughputPlan, target: Target, out_dir: Path, listener: ThroughputListener) -> ResultDocument:
    request = plan.request
    out_dir.mkdir(parents=True, exist_ok=True)
    document = new_document(plan.request.role, target, _params(plan), plan.settings.notes)
    run_id = uuid.uuid4().hex[:8]
    payload_paths = []
    for index, payload in enumerate(plan.payloads):
        path = out_dir / f".payload-{run_id}-{index}.bin"
        path.write_bytes(payload)
        payload_paths.append(path)
    workers: list[fleet.FleetWorker] = []
    timelines: dict[str, merge.Timeline] = {}
    temporary_topic = None
    try:
        with KafkaAdmin(target.bootstrap_servers, timeout_s=request.timeout_s) as admin:
            document.cluster["brokers"] = len(admin.brokers())
            topic, temporary_topic = _ensure_topic(admin, request, plan, run_id)
            document.params["topic"] = topic
            try:
                document.error = _measure(plan, target, topic, run_id, payload_paths, workers, timelines, listener)
            finally:
                for worker in workers:
                    worker.process.stop()
                if temporary_topic:
                    try:
                        admin.delete_topic(temporary_topic)
                    except KafkabenchError:
                        pass
    finally:
        for path in payload_paths:
            path.unlink(missing_ok=True)
    document.runs = [_merged_run(role, [w for w in workers if w.role == role], plan, timelines.get(role))
                     for role in ("produce", "consume") if any(w.role == role for w in workers)]
    received = sum(run.counters.get("received", 0) for run in document.runs if run.scenario == "consume")
    if request.role == "consume" and request.count and received < request.count and not document.error:
        document.notes.append(f"only {received} of {request.count} records arrived: the consumers stopped after "
                              f"{request.timeout_s:g} s without a record (--timeout)")
    write_result(document, out_dir, [stats_histograms(role, workers) for role in ("produce", "consume")
                                     if any(w.role == role for w in workers)])
    if document.error:
        raise ThroughputRunFailed(f"{document.error}; partial results kept in {out_dir}", document)
    return document


def stats_histograms(role: str, workers: list[fleet.FleetWorker]) -> dict[str, str]:
    outcomes = [w.outcome for w in workers if w.role == role and w.outcome is not None]
    return {metric: h.encode() for metric, h in merge.merge_histograms(outcomes).items()}


def _ensure_topic(admin: KafkaAdmin, request: ThroughputRequest, plan: ThroughputPlan, run_id: str) -> tuple[str, str | None]:
    if request.topic:
        try:
            admin.describe_topic(request.topic)
            return request.topic, None
        except KafkabenchError:
            if request.role == "consume":
                raise ConfigError(f"topic {request.topic} does not exist on {admin.bootstrap_servers}") from None
        admin.create_topic(request.topic, request.partitions, request.replication_factor, plan.settings.values("topic"))
        return request.topic, None
    name = f"kafkabench-{request.role}-{run_id}"
    admin.create_topic(name, request.partitions, request.replication_factor, plan.settings.values("topic"))
    return name, name


def _task(plan: ThroughputPlan, target: Target, topic: str, scenario: str, payload_paths: list[Path], params: dict) -> Task:
    return Task(scenario=scenario, client=plan.request.client, bootstrap_servers=target.bootstrap_servers, topic=topic,
                producer_config=plan.producer_config, consumer_config=plan.consumer_config,
                payload_files=[str(p) for p in payload_paths],
                payload_sha256s=[hashlib.sha256(p).hexdigest() for p in plan.payloads],
                timeout_s=plan.request.timeout_s, params=params)


def _start_workers(plan, target, topic, run_id, payload_paths, workers: list[fleet.FleetWorker]) -> None:
    request = plan.request
    command = client_registry.worker_command(request.client)
    consumers = request.consumers if request.role == "produce" else max(1, request.consumers)
    group = plan.consumer_group
    # one consumer stops at the count itself; several are stopped together when their sum reaches it
    consume_count = request.count if request.role == "consume" and consumers == 1 else None
    for index in range(consumers):  # consumers first: they must be positioned before anything is produced
        params = {"group": group, "from": "latest" if request.role == "produce" else request.start_from,
                  "count": consume_count, "duration_s": request.duration_s if request.role == "consume" else None,
                  "interval_s": request.interval_s, "check": request.check,
                  "idle_timeout_s": request.timeout_s if request.role == "consume" else 3600}
        workers.append(fleet.launch("consume", index, command, _task(plan, target, topic, "consume", payload_paths, params)))
    if request.role == "produce":
        rate = request.rate / request.producers if request.rate > 0 else -1
        for index, count in enumerate(_split(request.count, request.producers)):
            params = {"count": count, "duration_s": request.duration_s, "rate_per_s": rate,
                      "interval_s": request.interval_s, "stamp": consumers > 0}
            workers.append(fleet.launch("produce", index, command, _task(plan, target, topic, "produce", payload_paths, params)))
    for worker in workers:
        worker.process.receive(Ready, timeout_s=WORKER_START_S + request.timeout_s)


def _measure(plan, target, topic, run_id, payload_paths, workers, timelines, listener) -> str | None:
    request = plan.request
    try:
        _start_workers(plan, target, topic, run_id, payload_paths, workers)
        for role in {w.role for w in workers}:
            timelines[role] = merge.Timeline([w.name for w in workers if w.role == role],
                                             "publish_latency" if role == "produce" else "e2e")
        for worker in workers:
            worker.process.send(Start())
        several = request.role == "consume" and request.consumers > 1
        fleet.follow(workers, timelines, listener, DRAIN_S, request.timeout_s + 10, request.count if several else None)
    except WorkerFailed as failed:
        broken = next((w for w in workers if w.name == failed.worker), None)
        if broken is not None:
            broken.outcome, broken.error = failed.partial, failed.reason
        fleet.finish_all(workers, request.timeout_s + 10)
        return str(failed)
    except KeyboardInterrupt:
        fleet.finish_all(workers, request.timeout_s + 10)
        return "interrupted"
    return None


def _merged_run(role: str, workers: list[fleet.FleetWorker], plan: ThroughputPlan, timeline: merge.Timeline | None) -> Run:
    outcomes = [w.outcome for w in workers if w.outcome is not None]
    counters = merge.sum_counters(outcomes)
    start_ns, end_ns = merge.wall_span(outcomes)
    records = counters.get("acked" if role == "produce" else "received", 0)
    errors = [f"{w.name}: {w.error}" for w in workers if w.error]
    config_role = "producer" if role == "produce" else "consumer"
    effective = outcomes[0].effective_config.get(config_role, {}) if outcomes else {}
    return Run(
        client=plan.request.client,
        client_version=next((o.client_version for o in outcomes if o.client_version), ""),
        scenario=role,
        params={**_params(plan), "workers": len(workers)},
        stats=stats_from(merge.merge_histograms(outcomes)),
        throughput=merge.throughput(records, counters.get("payload_bytes", 0), start_ns, end_ns),
        counters=counters,
        resources=merge.resources(outcomes),
        duration_s=(end_ns - start_ns) / 1e9 if start_ns is not None and end_ns is not None else 0.0,
        config={config_role: redact(effective), "topic": redact(plan.settings.values("topic"))},
        not_applicable=plan.not_applicable,
        timings=_timings(outcomes),
        timeline=timeline.entries if timeline else [],
        error="; ".join(errors) or None,
    )


def _timings(outcomes: list[Outcome]) -> dict[str, float]:
    timings: dict[str, float] = {}
    for outcome in outcomes:
        for key, value in outcome.timings.items():
            timings[key] = max(timings.get(key, value), value)  # the slowest worker is the one everyone waited for
    return timings


def _params(plan: ThroughputPlan) -> dict:
    r = plan.request
    return {"size_bytes": [len(p) for p in plan.payloads] if len(plan.payloads) > 1 else len(plan.payloads[0]),
            "payloads": [str(p) for p in r.payload_files] or "generated (random bytes)", "count": r.count,
            "duration_s": r.duration_s, "rate": r.rate, "producers": r.producers, "consumers": r.consumers,
            "partitions": r.partitions, "replication_factor": r.replication_factor, "acks": r.acks or "client default",
            "compression": r.compression or "client default", "client": r.client}


def add_apache_comparison(document: ResultDocument, plan: ThroughputPlan, target: Target, out_dir: Path,
                          listener: ThroughputListener) -> None:
    """Run Apache's tool for the same job on the same broker; its figures become one more run."""
    from kafkabench.labs import apache_perf

    request = plan.request
    ours = document.runs[0]
    records = int(ours.counters.get("acked" if request.role == "produce" else "received", 0)) or (request.count or 0)
    if records == 0:
        listener.note("no records measured: nothing to compare with Apache's tool")
        return
    with KafkaAdmin(target.bootstrap_servers, timeout_s=request.timeout_s) as admin:
        if request.role == "produce":
            topic = f"kafkabench-apache-{uuid.uuid4().hex[:8]}"
            admin.create_topic(topic, request.partitions, request.replication_factor, plan.settings.values("topic"))
            try:
                listener.note(f"running Apache ProducerPerformance: {records} records of {len(plan.payloads[0])} bytes")
                report = apache_perf.producer_performance(target.bootstrap_servers, topic, records, len(plan.payloads[0]),
                                                          request.rate, plan.settings.values("producer"))
            finally:
                admin.delete_topic(topic)
        else:
            listener.note(f"running Apache ConsumerPerformance: {records} records from {document.params['topic']}")
            report = apache_perf.consumer_performance(target.bootstrap_servers, document.params["topic"], records,
                                                      f"kafkabench-apache-{uuid.uuid4().hex[:8]}", plan.settings.values("consumer"))
    document.runs.append(Run(
        client="apache", client_version=document.cluster.get("kafka_version", ""), scenario=request.role,
        params={"tool": report.tool, "records": records, "command": " ".join(report.command[-14:])},
        throughput={"records_per_s": report.records_per_s, "payload_mb_per_s": report.mb_per_s},
        reported=report.figures,
    ))
    write_result(document, out_dir)

"""`kafkabench backlog`: how fast consumers catch up with a backlog while producers keep sending.

1. Build: producers send at --rate on an open-loop schedule; no consumer runs, so a backlog of --backlog bytes
   (or --backlog-seconds of producing) piles up on the brokers.
2. Drain: consumers start in a fresh group from the topic's start while the producers go on. Drained once the
   consumers' e2e p99 over a window (how old, from its intended send time, a record is when it is read) is under
   --drained-lag seconds. Drain time runs from the consumers' start signal (their group join precedes it, kept as
   their rebalance_s) to the end of that window.
3. Every phase is bounded: the build by twice its expected time plus 30 s, the drain by --max-drain. A drain
   that does not finish is reported with the rates measured over it and the time it would take at those rates,
   or `never` when the consumers read no faster than the producers write.

Result: a run per phase (the producers' --warmup seconds, the producers while building, the producers and the
consumers while draining, each with its histograms) and `params.backlog` with the figures. The warm-up is the
build's first seconds: what it writes is part of the backlog, its latencies are kept out of the build's.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from pathlib import Path

from kafkabench.admin import KafkaAdmin
from kafkabench.cluster.target import Target
from kafkabench.core import fleet
from kafkabench.core.clock import monotonic_ns
from kafkabench.core.events import Listener
from kafkabench.core.histogram import LatencyHistogram
from kafkabench.core.merge import MB
from kafkabench.core.protocol import ConsumeParams, ProduceParams, Ready, Start, task_params
from kafkabench.core.results import ResultDocument, Run, stats_from, write_result
from kafkabench.core.timeline import Timeline, TimelineEntry
from kafkabench.core.worker_process import WorkerFailed
from kafkabench.errors import KafkabenchError
from kafkabench.labs.base import LabFailed
from kafkabench.labs.capacity.scenario import BacklogScenario
from kafkabench.labs.document import count_brokers, new_document
from kafkabench.labs.throughput.plan import ThroughputPlan, payload_files, plan_throughput
from kafkabench.labs.throughput.run import WORKER_START_S, base_task, effective_params
from kafkabench.labs.throughput.scenario import ProduceScenario, warmup_windows

DEFAULT_BACKLOG_S = 20
FINISH_TIMEOUT_S = 40
CONSUMERS_CATCH_UP_S = 5  # after the producers stop: a drained group reads what is left in well under this


def produce_scenario(scenario: BacklogScenario) -> ProduceScenario:
    return ProduceScenario(**scenario.workload(), rate=scenario.rate, duration=_build_bound_s(scenario) + scenario.max_drain,
                           interval=scenario.interval, broker_phases=False)


def check_backlog(scenario: BacklogScenario, listener: Listener) -> ThroughputPlan:
    return plan_throughput(produce_scenario(scenario), listener, start_from="earliest")


def _build_s(scenario: BacklogScenario, size: int) -> float:
    """Seconds of producing the backlog takes at the asked rate."""
    if scenario.backlog_bytes is not None:
        return scenario.backlog_bytes / size / scenario.rate
    return scenario.backlog_seconds or DEFAULT_BACKLOG_S


def _build_bound_s(scenario: BacklogScenario) -> float:
    return 2 * _build_s(scenario, scenario.size) + 30


@dataclass
class _Phases(Listener):
    """Follows the windows: the backlog built so far, when the drain started, when it was done."""

    listener: Listener
    target_bytes: int | None
    target_s: float
    drained_lag_ms: float
    origin_ns: int = field(default_factory=monotonic_ns)
    producing_ns: int | None = None  # the producers' first window's start: --backlog-seconds counts from it
    acked_bytes: int = 0
    drain_ns: int | None = None  # the consumers' start signal
    drained_ns: int | None = None
    stopping: bool = False  # the producers were asked to finish
    entries: dict[str, list[TimelineEntry]] = field(default_factory=lambda: {"produce": [], "consume": []})

    def note(self, message: str) -> None:
        self.listener.note(message)

    def window(self, role: str, entry) -> None:
        self.listener.window(role, entry)
        self.entries[role].append(entry)
        if role == "produce" and self.producing_ns is None:
            self.producing_ns = entry.start_ns
        if role == "produce" and self.drain_ns is None:
            self.acked_bytes += round(entry.mb_per_s * MB * (entry.end_ns - entry.start_ns) / 1e9)
        if role == "consume" and self.drained_ns is None and entry.p99_ms is not None and entry.p99_ms < self.drained_lag_ms:
            self.drained_ns = entry.end_ns

    def built(self, now_ns: int) -> bool:
        if self.target_bytes is not None:
            return self.acked_bytes >= self.target_bytes
        # seconds of producing, not of waiting for it: CI once had 2.5 s of producers' windows in the 3.2 s to the drain
        return self.producing_ns is not None and now_ns - self.producing_ns >= self.target_s * 1e9


def run_backlog(scenario: BacklogScenario, target: Target, out_dir: Path, listener: Listener) -> ResultDocument:
    plan = check_backlog(scenario, listener)
    out_dir.mkdir(parents=True, exist_ok=True)
    document = new_document("backlog", target, {**scenario.model_dump(mode="json", exclude_none=True),
                                                **effective_params(plan)})
    count_brokers(document, target, scenario.timeout)
    stem = f"kafkabench-backlog-{uuid.uuid4().hex[:8]}"
    topics = [stem] if scenario.topics == 1 else [f"{stem}-{index:04d}" for index in range(scenario.topics)]
    workers: list[fleet.FleetWorker] = []
    size = sum(len(p) for p in plan.payloads) / len(plan.payloads)
    phases = _Phases(listener, scenario.backlog_bytes, _build_s(scenario, round(size)), scenario.drained_lag * 1000)
    with payload_files(plan, out_dir) as payloads, KafkaAdmin(target.connection, timeout_s=scenario.timeout) as admin:
        admin.create_topics(topics, scenario.partitions, scenario.replication_factor, plan.settings.values("topic"))
        try:
            document.error = _drive(scenario, plan, target, topics, payloads, workers, phases, listener)
        finally:
            fleet.stop_all(workers)
            try:
                admin.delete_topics(topics)
            except KafkabenchError:
                pass
    document.params["topic"] = topics[0]
    histograms = _figures(document, scenario, phases, workers)
    write_result(document, out_dir, histograms)
    if document.error:
        raise LabFailed(f"{document.error}; partial results kept in {out_dir}", document)
    return document


def _drive(scenario: BacklogScenario, plan: ThroughputPlan, target: Target, topics: list[str], payloads: list[Path],
           workers: list[fleet.FleetWorker], phases: _Phases, listener: Listener) -> str | None:
    task = base_task(plan, target, topics[0], payloads)
    several = topics if len(topics) > 1 else None
    produce = ProduceParams(duration_s=_build_bound_s(scenario) + scenario.max_drain, interval_s=scenario.interval,
                            rate_per_s=scenario.rate / scenario.producers, stamp=True, topics=several,
                            keys=scenario.keys)
    consume = ConsumeParams(group=plan.group, start_from="earliest", interval_s=scenario.interval,
                            idle_timeout_s=3600, topics=several)
    timelines = {"produce": Timeline([f"producer {i + 1}" for i in range(scenario.producers)], "publish_latency",
                                     warmup_windows=warmup_windows(scenario.warmup, scenario.interval)),
                 "consume": Timeline([f"consumer {i + 1}" for i in range(scenario.consumers)], "e2e")}
    build_bound_ns = int(_build_bound_s(scenario) * 1e9)

    def start(role: str, count: int, params) -> None:
        role_task = task.model_copy(update={"scenario": role, "params": task_params(params)})
        started = [fleet.launch(role, i, target.launcher, scenario.client, role_task) for i in range(count)]
        workers.extend(started)
        for worker in started:
            worker.process.receive(Ready, timeout_s=WORKER_START_S + scenario.timeout)
        for worker in started:
            worker.process.send(Start())

    def on_tick(_elapsed_s: float) -> None:
        now = monotonic_ns()
        if phases.drain_ns is None:
            if phases.built(now) or now - phases.origin_ns > build_bound_ns:
                if not phases.built(now):
                    listener.note(f"the backlog was not built within {build_bound_ns / 1e9:.0f} s: draining "
                                  f"{phases.acked_bytes / 1e6:,.1f} MB")
                listener.note(f"{phases.acked_bytes / 1e6:,.1f} MB acknowledged: starting {scenario.consumers} "
                              "consumer(s) from the topic's start, the producers going on meanwhile")
                start("consume", scenario.consumers, consume)
                phases.drain_ns = monotonic_ns()
        elif phases.drained_ns is not None or now - phases.drain_ns > scenario.max_drain * 1e9:
            if not phases.stopping:
                phases.stopping = True
                listener.note("drained: stopping the producers" if phases.drained_ns else
                              f"not drained within {scenario.max_drain:g} s (--max-drain): stopping the producers")
                fleet.ask_finish([w for w in workers if w.role == "produce"])

    try:
        target.launcher.reserve(max(scenario.producers, scenario.consumers))  # producer i beside consumer i
        phases.origin_ns = monotonic_ns()
        start("produce", scenario.producers, produce)
        phases.origin_ns = monotonic_ns()
        fleet.follow(workers, timelines, phases, CONSUMERS_CATCH_UP_S, FINISH_TIMEOUT_S, on_tick=on_tick)
    except WorkerFailed as failed:
        return fleet.finish_after_failure(workers, failed, FINISH_TIMEOUT_S)
    except KeyboardInterrupt:
        fleet.finish_all(workers, FINISH_TIMEOUT_S)
        return "interrupted"
    return None


def _figures(document: ResultDocument, scenario: BacklogScenario, phases: _Phases,
             workers: list[fleet.FleetWorker]) -> list[dict[str, str]]:
    """Runs per phase and params.backlog; the runs' histograms, encoded, in the runs' order."""
    drain_ns, drained_ns = phases.drain_ns, phases.drained_ns
    produced, consumed = phases.entries["produce"], phases.entries["consume"]
    end_ns = drained_ns or max((e.end_ns for e in consumed), default=drain_ns)
    built = [e for e in produced if drain_ns is None or e.end_ns <= drain_ns]  # the warm-up's too: in the backlog
    warmup, build = [e for e in built if e.phase == "warmup"], [e for e in built if e.phase is None]
    during = [e for e in produced if drain_ns is not None and e.start_ns >= drain_ns and e.end_ns <= end_ns]
    if not during and drain_ns is not None:  # a drain shorter than a window: the producers' windows around it
        during = [e for e in produced if e.end_ns > drain_ns and e.start_ns < end_ns]
    reading = [e for e in consumed if e.end_ns <= end_ns]
    client_version = next((w.outcome.client_version for w in workers if w.outcome is not None), "")
    runs, histograms = [], []
    for name, role, entries, metric in (("warmup", "produce", warmup, "publish_latency"),
                                        ("build", "produce", build, "publish_latency"),
                                        ("drain", "produce", during, "publish_latency"),
                                        ("drain", "consume", reading, "e2e")):
        if not entries:
            continue
        merged = LatencyHistogram()
        for entry in entries:
            merged.merge(entry.histogram())
        seconds = (max(e.end_ns for e in entries) - min(e.start_ns for e in entries)) / 1e9
        records = sum(e.records for e in entries)
        megabytes = sum(e.mb_per_s * (e.end_ns - e.start_ns) / 1e9 for e in entries)
        runs.append(Run(client=scenario.client, client_version=client_version, scenario=f"{name} {role}",
                        params={"phase": name, "role": role}, stats=stats_from({metric: merged} if merged.count else {}),
                        throughput={"records_per_s": records / seconds, "payload_mb_per_s": megabytes / seconds},
                        counters={"records": records, "errors": sum(e.errors for e in entries)}, duration_s=seconds))
        histograms.append({metric: merged.encode()} if merged.count else {})
    document.runs = runs
    received = sum(e.records for e in reading)
    built_bytes = round(sum(e.mb_per_s * MB * (e.end_ns - e.start_ns) / 1e9 for e in built))
    figures = {"built_bytes": built_bytes, "built_records": sum(e.records for e in built),
               "build_s": (drain_ns - phases.origin_ns) / 1e9 if drain_ns else None,
               "drained": drained_ns is not None, "drain_s": (drained_ns - drain_ns) / 1e9 if drained_ns else None}
    if drain_ns is not None and reading:
        consume_rate = _rate(reading)  # over the consumers' windows, as their run's records/s
        produce_rate = _rate(during)
        figures.update(catch_up_records_per_s=consume_rate, produce_records_per_s=produce_rate)
        if not drained_ns:
            left = sum(e.records for e in produced if e.end_ns <= end_ns) - received
            figures["left_records"] = left
            faster = (consume_rate or 0) - (produce_rate or 0)
            figures["projected_drain_s"] = left / faster if faster > 0 else None
    document.params["backlog"] = figures
    return histograms


def _rate(entries: list[TimelineEntry]) -> float | None:
    """Records/s over the entries' own span."""
    if not entries:
        return None
    return sum(e.records for e in entries) / ((max(e.end_ns for e in entries) - min(e.start_ns for e in entries)) / 1e9)

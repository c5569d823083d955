"""The throughput lab's run (seed 001): `kafkabench produce` and `kafkabench consume`.

N producer workers (and M consumer workers) start together on one signal; each streams a progress window
every interval; their outcomes are merged into one run per role (core.merge). A failing worker ends the run:
the others are told to finish and what everyone measured is written. A consume scenario without a topic
first fills a fresh one (set-up, not measured), reads it back checking every value, and drops it.
"""

from __future__ import annotations

import contextlib
import shutil
import time
import uuid
from pathlib import Path

from kafkabench.admin import KafkaAdmin
from kafkabench.client_defaults import default_of
from kafkabench.cluster.target import Target
from kafkabench.config.redact import redact
from kafkabench.config.translate import translate
from kafkabench.core import fleet, merge
from kafkabench.core.events import SILENT, Listener
from kafkabench.core.protocol import ConsumeParams, Outcome, ProduceParams, Ready, Start, Task, task_params
from kafkabench.core.results import ResultDocument, Run, stats_from, write_result
from kafkabench.core.shares import even_shares
from kafkabench.core.timeline import Timeline, TimelineEntry, phase_histograms
from kafkabench.core.worker_process import WorkerFailed
from kafkabench.errors import ConfigError, KafkabenchError
from kafkabench.labs import broker_phases
from kafkabench.labs.base import LabFailed
from kafkabench.labs.document import new_document
from kafkabench.labs.payload import file_sha256
from kafkabench.labs.throughput.plan import Streaming, ThroughputPlan, payload_files, plan_throughput
from kafkabench.labs.throughput.scenario import ConsumeScenario, ProduceScenario
from kafkabench.workers.consume import STALL_NS

WORKER_START_S = 120
DRAIN_S = 30  # after the producers: how long consumers may take to read what was acknowledged
FILL_CLIENT = "confluent"
WIRE_BYTES_PARTITIONS = 1000  # writes the records a consume scenario without a topic reads


def run_throughput(scenario: Streaming, target: Target, out_dir: Path, listener: Listener,
                   drain_s: float = DRAIN_S) -> ResultDocument:
    """`drain_s`: how long consumers may go on reading what was acknowledged once the producers are done."""
    if scenario.lab == "consume" and scenario.topic is None:
        return _fill_and_consume(scenario, target, out_dir, listener)
    plan = plan_throughput(scenario, listener)
    document = _measure_run(plan, target, out_dir, listener, drain_s)
    if scenario.compare_apache:
        from kafkabench.labs.throughput.apache import add_apache_comparison

        add_apache_comparison(document, plan, target, out_dir, listener)
    return document


def _fill_and_consume(scenario: ConsumeScenario, target: Target, out_dir: Path, listener: Listener) -> ResultDocument:
    """Fill a fresh topic with the records to read (that produce run is set-up, not kept), read it, drop it."""
    topic = f"kafkabench-fill-{uuid.uuid4().hex[:8]}"
    fill = ProduceScenario(topic=topic, size=scenario.size, payload=scenario.payload, count=scenario.count,
                           partitions=scenario.partitions, topic_config=scenario.topic_config, client=FILL_CLIENT,
                           timeout=scenario.timeout)
    listener.note(f"filling {topic} with {scenario.count:,} records of {scenario.size} B to read")
    try:
        _measure_run(plan_throughput(fill, SILENT), target, out_dir / ".fill", SILENT)
        return run_throughput(scenario.model_copy(update={"topic": topic, "check": True}), target, out_dir, listener)
    finally:
        shutil.rmtree(out_dir / ".fill", ignore_errors=True)
        try:
            with KafkaAdmin(target.connection, timeout_s=10) as admin:
                admin.delete_topic(topic)
        except KafkabenchError:
            pass


def _measure_run(plan: ThroughputPlan, target: Target, out_dir: Path, listener: Listener,
                 drain_s: float = DRAIN_S) -> ResultDocument:
    scenario = plan.scenario
    out_dir.mkdir(parents=True, exist_ok=True)
    document = new_document(plan.role, target, _params(plan), [f"set {line}" for line in plan.settings.notes])
    workers: list[fleet.FleetWorker] = []
    timelines: dict[str, Timeline] = {}
    with payload_files(plan, out_dir) as payload_paths, \
            KafkaAdmin(target.connection, timeout_s=scenario.timeout) as admin:
        document.cluster["brokers"] = len(admin.brokers())
        created = time.monotonic()
        topics, temporary = _ensure_topics(admin, plan)
        topic = topics[0]
        document.params["topic"] = topic
        if len(topics) > 1:  # how long the cluster took to have them all led and in sync
            document.params["topics_ready_s"] = round(time.monotonic() - created, 3)
        if plan.role == "produce" and scenario.consumers:
            document.params["e2e_clocks"] = e2e_clocks(target)
        phases = _PhaseLog(scenario, target, admin, topic) if plan.role == "produce" else None
        try:
            with phases or contextlib.nullcontext():
                document.error, kind = _measure(plan, target, topics, payload_paths, workers, timelines, listener,
                                                drain_s)
        finally:
            fleet.stop_all(workers)
            if temporary:
                try:
                    admin.delete_topics(temporary)
                except KafkabenchError:
                    pass
    roles = [role for role in ("produce", "consume") if any(w.role == role for w in workers)]
    measured = {role: _measured(role, workers, timelines) for role in roles}
    document.runs = [_merged_run(role, [w for w in workers if w.role == role], plan, timelines.get(role),
                                 measured[role]) for role in roles]
    for run in document.runs:
        if phases and phases.wanted and run.scenario == "produce":
            run.params = {**run.params, "broker_phases": phases.breakdown(run)}
    received = sum(run.counters.get("received", 0) for run in document.runs if run.scenario == "consume")
    if plan.role == "consume" and scenario.count and received < scenario.count and not document.error:
        document.notes.append(f"only {received} of {scenario.count} records arrived: the consumers stopped after "
                              f"{scenario.timeout:g} s without a record (--timeout)")
    if not document.error and (unread := unread_note(plan, document.runs, drain_s)):
        document.notes.append(unread)
    if plan.role == "produce" and not counts_wire_bytes(scenario) and not any("wire_bytes" in run.counters
                                                                               for run in document.runs):
        document.notes.append(f"wire bytes not counted: beyond {WIRE_BYTES_PARTITIONS:,} partitions librdkafka's "
                              "statistics report, which names every partition, costs its producer a tenth of its rate")
    if plan.role == "consume" and (pauses := fetch_pause_note(plan, document.runs)):
        document.notes.append(pauses)
    if negative := sum(run.counters.get("negative", 0) for run in document.runs):
        bounds = [w.get("clock_bound_ns", 0) for run in document.runs for w in run.workers]
        document.notes.append(f"{negative:,} e2e latencies came out below zero: a consumer read a record before the "
                              "time its producer stamped, as their clocks tell it (the nodes' clocks are known within "
                              f"{max(bounds, default=0) / 1e6:.3f} ms); counted in `negative`, not in the percentiles")
    write_result(document, out_dir, [{metric: h.encode() for metric, h in measured[role].items()} for role in roles])
    if document.error:
        raise LabFailed(f"{document.error}; partial results kept in {out_dir}", document, kind)
    return document


class _PhaseLog:
    """The brokers' request logger on while the producers run (when the scenario says where the produce time went),
    and the topic's end offsets read before a temporary topic is dropped: what weighs each logged request."""

    def __init__(self, scenario: ProduceScenario, target: Target, admin: KafkaAdmin, topic: str) -> None:
        self.wanted, self.target, self.admin, self.topic = scenario.says_broker_phases, target, admin, topic
        self.topic_id, self.ends, self.unavailable = "", {}, None
        self._logging = broker_phases.request_logging(target, admin, self.wanted)

    def __enter__(self) -> None:
        self.unavailable = self._logging.__enter__()
        if self.wanted and not self.unavailable:
            self.topic_id = self.admin.topic_id(self.topic)

    def __exit__(self, *exc_info) -> None:
        try:
            if self.wanted and not self.unavailable:
                self.ends = {p: high for p, (_, high) in self.admin.offsets(self.topic).items()}
        except KafkabenchError as exc:
            self.unavailable = f"not available: the topic's end offsets could not be read ({exc})"
        finally:
            self._logging.__exit__(*exc_info)

    def breakdown(self, run: Run) -> dict:
        if self.unavailable:
            return {"error": self.unavailable}
        if "publish_latency" not in run.stats:
            return {"error": "not available: no record was acknowledged"}
        return broker_phases.streamed(self.target, self.topic, self.topic_id, self.ends, run.counters.get("acked", 0),
                                      run.stats["publish_latency"].mean_ms)


def fetch_pause_note(plan: ThroughputPlan, runs: list[Run]) -> str | None:
    """Say when a read of a backlog sat out pauses in fetching (the consumers' `stalls`): records/s then counts how many
    pauses fell into the run, which differs from run to run (a 1M-record read: 0.7 s plus 0 to 4 pauses of 1 s)."""
    run = next((r for r in runs if r.scenario == "consume"), None)
    if run is None or not run.counters.get("stalls"):
        return None
    idle, received = run.timings.get("idle_s", 0.0), run.counters.get("received", 0)
    note = (f"the consumers sat idle {idle:.2f} s of {run.duration_s:.2f} s with nothing to read, "
            f"{run.counters['stalls']} pause(s) of {STALL_NS / 1e9:g} s or more: records/s counts the client's pauses in "
            "fetching, which vary from run to run")
    if run.duration_s > idle:
        note += f" (between them it read {received / (run.duration_s - idle):,.0f} records/s)"
    if plan.scenario.client == "confluent" and "fetch.queue.backoff.ms" not in plan.consumer_config:
        note += ("; librdkafka stops fetching a partition for fetch.queue.backoff.ms (1000 ms) whenever "
                 "queued.min.messages (100000) records are queued: -X librdkafka:fetch.queue.backoff.ms=10 keeps it "
                 "fetching")
    return note


def _measured(role: str, workers: list[fleet.FleetWorker], timelines: dict[str, Timeline]) -> dict:
    """The role's latencies past the warm-up (the measured phase's timeline entries, merged exactly); without a
    warm-up, every worker's whole run."""
    timeline = timelines.get(role)
    if timeline is not None and timeline.phase_entries("warmup"):
        return {metric: h for metric, h in phase_histograms(timeline.phase_entries(None)).items() if h.count}
    return merge.merge_histograms([w.outcome for w in workers if w.role == role and w.outcome is not None])


def _ensure_topics(admin: KafkaAdmin, plan: ThroughputPlan) -> tuple[list[str], list[str]]:
    """(the run's topics, those of them to drop afterwards)"""
    scenario = plan.scenario
    count = getattr(scenario, "topics", 1)
    if count == 1:
        topic, temporary = _ensure_topic(admin, plan)
        return [topic], [temporary] if temporary else []
    stem = scenario.topic or f"kafkabench-{plan.role}-{uuid.uuid4().hex[:8]}"
    names = [f"{stem}-{index:04d}" for index in range(count)]
    admin.create_topics(names, scenario.partitions, scenario.replication_factor, plan.settings.values("topic"))
    return names, [] if scenario.topic else names


def _ensure_topic(admin: KafkaAdmin, plan: ThroughputPlan) -> tuple[str, str | None]:
    scenario, config = plan.scenario, plan.settings.values("topic")
    replication = getattr(scenario, "replication_factor", 1)
    if scenario.topic:
        try:
            admin.describe_topic(scenario.topic)
            return scenario.topic, None
        except KafkabenchError:
            if plan.role == "consume":
                raise ConfigError(f"topic {scenario.topic} does not exist on {admin.bootstrap_servers}") from None
        # exist_ok: a describe that failed on a loaded broker does not mean the topic is missing
        admin.create_topic(scenario.topic, scenario.partitions, replication, config, exist_ok=True)
        return scenario.topic, None
    name = f"kafkabench-{plan.role}-{uuid.uuid4().hex[:8]}"
    admin.create_topic(name, scenario.partitions, replication, config, exist_ok=True)
    return name, name


def _shares(count: int | None, producers: int) -> list[int | None]:
    return [None] * producers if count is None else even_shares(count, producers)


def base_task(plan: ThroughputPlan, target: Target, topic: str, payload_paths: list[Path]) -> Task:
    """What every worker of the run is given; each role adds its scenario and params."""
    shared = [target.launcher.share(path) for path in payload_paths]
    return Task(scenario="", client=plan.scenario.client, bootstrap_servers=target.bootstrap_servers, topic=topic,
                producer_config=plan.producer_config, consumer_config=plan.consumer_config, payload_files=shared,
                payload_sha256s=[file_sha256(path) for path in payload_paths], timeout_s=plan.scenario.timeout)


def _start_workers(plan: ThroughputPlan, target: Target, topics: list[str], payload_paths: list[Path],
                   workers: list[fleet.FleetWorker]) -> None:
    scenario, launcher, producing = plan.scenario, target.launcher, plan.role == "produce"
    topic, several_topics = topics[0], topics if len(topics) > 1 else None
    task = base_task(plan, target, topic, payload_paths)
    consumers = scenario.consumers if producing else max(1, scenario.consumers)
    # one consumer stops at the count itself; several each stop at their partitions' share of it
    several = not producing and consumers > 1 and scenario.count is not None
    duration = scenario.duration + scenario.warmup if scenario.duration else None  # --duration counts after it
    params = ConsumeParams(group=plan.group, start_from="latest" if producing else scenario.start_from,
                           count=scenario.count if not producing and consumers == 1 else None,
                           duration_s=None if producing else duration,
                           interval_s=scenario.interval, check=not producing and scenario.check,
                           idle_timeout_s=3600 if producing else scenario.timeout,
                           stop_offsets=_stop_offsets(target, topic, plan) if several else None,
                           topics=several_topics, record_time_e2e=producing and scenario.record_time_e2e)
    pairs = node_partitions(plan, target, topic) if producing and consumers else None
    consumer_tasks = [task.model_copy(update={"scenario": "consume", "params": task_params(
        params.model_copy(update={"partitions": partitions}))}) for partitions in pairs or [None] * consumers]
    if len(groups := _groups(plan)) > 1:
        consumer_tasks = [_in_group(plan, consumer_task, group) for group in groups for consumer_task in consumer_tasks]
    producer_tasks, warmup = [], scenario.jit_warmup if producing else 0
    if producing:
        rate = scenario.rate / scenario.producers if scenario.rate > 0 else -1
        for count, partitions in zip(_shares(scenario.count, scenario.producers), pairs or [None] * scenario.producers):
            params = ProduceParams(count=count, duration_s=duration, rate_per_s=rate, interval_s=scenario.interval,
                                   stamp=consumers > 0, warmup=warmup, partitions=partitions, topics=several_topics,
                                   keys=scenario.keys, wire_bytes=counts_wire_bytes(scenario))
            producer_tasks.append(task.model_copy(update={"scenario": "produce", "params": task_params(params)}))
    # consumers are positioned at the end before anything measured is produced: first (every one ready, its group
    # settled, before a producer starts), or after producers that warm up (their warm-up records then lie before
    # where the consumers start)
    order = [("produce", producer_tasks), ("consume", consumer_tasks)] if warmup else \
        [("consume", consumer_tasks), ("produce", producer_tasks)]
    launcher.reserve(max(len(producer_tasks), len(consumer_tasks)))  # producer i beside consumer i
    for role, tasks in order:
        started = [fleet.launch(role, index, launcher, scenario.client, role_task) for index, role_task in enumerate(tasks)]
        workers.extend(started)
        for worker in started:
            worker.process.receive(Ready, timeout_s=WORKER_START_S + scenario.timeout)


def counts_wire_bytes(scenario: ProduceScenario) -> bool:
    """Whether the producers count the bytes they send: not beyond WIRE_BYTES_PARTITIONS, where librdkafka's report of
    them, built every 500 ms and naming every partition, cost its producer a tenth of its rate (1,000 topics)."""
    return scenario.topics * scenario.partitions <= WIRE_BYTES_PARTITIONS


def unread_note(plan: ThroughputPlan, runs: list, drain_s: float) -> str | None:
    """A produce run whose consumers (each group reading every acknowledged record) did not read them all says so:
    the e2e latencies then leave out what never arrived."""
    if plan.role != "produce" or not any(run.scenario == "consume" for run in runs):
        return None
    due = len(_groups(plan)) * sum(run.counters.get("acked", 0) for run in runs if run.scenario == "produce")
    received = sum(run.counters.get("received", 0) for run in runs if run.scenario == "consume")
    if received >= due:
        return None
    return (f"the consumers read {received:,} of the {due:,} acknowledged records they were to read, within "
            f"{drain_s:g} s of the producers' end: the e2e latencies leave out the {due - received:,} others")


def _groups(plan: ThroughputPlan) -> list[str]:
    """The consumer groups: the run's own, or one per subscription, each reading every record."""
    subscriptions = getattr(plan.scenario, "subscriptions", 1)
    return [plan.group] if subscriptions == 1 else [f"{plan.group}-{index}" for index in range(subscriptions)]


def _in_group(plan: ThroughputPlan, task: Task, group: str) -> Task:
    """The consumer's task in `group`, its settings translated again into the client's names with that group.id."""
    config = translate(plan.scenario.client, "consumer", {**plan.settings.values("consumer"), "group.id": group}).config
    return task.model_copy(update={"params": {**task.params, "group": group}, "consumer_config": config})


def e2e_clocks(target: Target) -> str:
    """On whose clocks a run's e2e latencies are read."""
    if target.launcher.name == "local":
        return "one host's"
    if target.launcher.pairs_by_node:
        return "each node's own (producer i and consumer i on one node's partitions)"
    return "two nodes' (--cross-host-e2e): exact within the sum of their bounds, runs[].workers[].clock_bound_ns"


def node_partitions(plan: ThroughputPlan, target: Target, topic: str) -> list[list[int]] | None:
    """Each producer/consumer pair's partitions: where the workers may run on hosts with clocks of their own
    (`launcher.pairs_by_node`), producer i and consumer i share a node and partitions i, i + n, i + 2n, ..., so each
    e2e latency is read on one node's clock; elsewhere None (the partitioner and the group decide)."""
    scenario = plan.scenario
    if not target.launcher.pairs_by_node:
        return None
    pairs = scenario.producers
    if scenario.consumers != pairs:
        raise ConfigError(f"--launcher ray measures e2e within each node, producer i and consumer i on one node's "
                          f"partitions: give as many consumers as producers (--consumers {pairs}), or read across "
                          "nodes' clocks with --cross-host-e2e")
    with KafkaAdmin(target.connection, timeout_s=scenario.timeout) as admin:
        count = len(admin.describe_topic(topic).partitions)  # not list_offsets: a fresh topic's leaders may still move
    if count < pairs:
        raise ConfigError(f"{pairs} producer/consumer pairs need a partition each at least; {topic} has {count}: "
                          f"--partitions {pairs}, or --cross-host-e2e")
    return deal(count, pairs)


def deal(partitions: int, pairs: int) -> list[list[int]]:
    """Partitions dealt to pairs in turn: pair i gets i, i + pairs, i + 2 pairs, ..."""
    return [list(range(pair, partitions, pairs)) for pair in range(pairs)]


def _stop_offsets(target: Target, topic: str, plan: ThroughputPlan) -> dict[int, int] | None:
    """Where each partition's share of the count ends, counted from where the group starts (its committed
    offset, else the earliest or the end offset), split in proportion to what each partition holds: a
    group's partitions are rarely even, so no consumer can be given a share of the count itself. None when
    the records are not all there yet; the consumers are then stopped together once their sum reaches it."""
    count = plan.scenario.count
    with KafkaAdmin(target.connection, timeout_s=plan.scenario.timeout) as admin:
        bounds = admin.offsets(topic)
        committed = admin.committed(plan.group, topic) if plan.scenario.group else {}  # a fresh group has none
    starts = {p: committed.get(p, low if plan.scenario.start_from == "earliest" else high)
              for p, (low, high) in bounds.items()}
    shares = split_count(count, {p: max(0, bounds[p][1] - start) for p, start in starts.items()})
    return None if shares is None else {p: starts[p] + share for p, share in shares.items()}


def split_count(count: int, available: dict[int, int]) -> dict[int, int] | None:
    """`count` split over partitions in proportion to the records each has available, none given more than
    it has; None when together they have fewer."""
    total = sum(available.values())
    if total == 0 or total < count:
        return None
    shares = {p: count * held // total for p, held in available.items()}
    by_remainder = sorted(available, key=lambda p: count * available[p] % total, reverse=True)
    for p in by_remainder[:count - sum(shares.values())]:  # largest remainders first: each has room for one more
        shares[p] += 1
    return shares


def _measure(plan: ThroughputPlan, target: Target, topics: list[str], payload_paths: list[Path],
             workers: list[fleet.FleetWorker], timelines: dict[str, Timeline], listener: Listener,
             drain_s: float) -> tuple[str | None, str]:
    """(what ended the run early or None, its kind)"""
    scenario = plan.scenario
    try:
        _start_workers(plan, target, topics, payload_paths, workers)
        for role in {w.role for w in workers}:
            timelines[role] = Timeline([w.name for w in workers if w.role == role],
                                       "publish_latency" if role == "produce" else "e2e",
                                       warmup_windows=scenario.warmup_windows)
        for worker in workers:
            worker.process.send(Start())
        several = plan.role == "consume" and scenario.consumers > 1
        fleet.follow(workers, timelines, _Progress(listener, scenario), drain_s, scenario.timeout + 10,
                     scenario.count if several else None, readers=len(_groups(plan)))
    except WorkerFailed as failed:
        return fleet.finish_after_failure(workers, failed, scenario.timeout + 10), failed.kind
    except KeyboardInterrupt:
        fleet.finish_all(workers, scenario.timeout + 10)
        return "interrupted", "interrupted"
    return None, ""


class _Progress(Listener):
    """Windows as they come, and how far each role is: records of the count, or seconds of the duration."""

    def __init__(self, listener: Listener, scenario: Streaming) -> None:
        self._listener, self._scenario = listener, scenario
        self._records: dict[str, int] = {}

    def window(self, role: str, entry) -> None:
        self._listener.window(role, entry)
        self._records[role] = self._records.get(role, 0) + entry.records
        if self._scenario.count:
            self._listener.progress(self._records[role], self._scenario.count, role)
        else:
            self._listener.progress(entry.t_s, self._scenario.duration, role)


def _merged_run(role: str, workers: list[fleet.FleetWorker], plan: ThroughputPlan, timeline: Timeline | None,
                histograms: dict) -> Run:
    outcomes = [w.outcome for w in workers if w.outcome is not None]
    counters = merge.sum_counters(outcomes)
    start_ns, end_ns = merge.wall_span(outcomes)
    records = counters.get("acked" if role == "produce" else "received", 0)
    payload_bytes, params = counters.get("payload_bytes", 0), {**_params(plan), "workers": len(workers)}
    if timeline is not None and (warmup := timeline.phase_entries("warmup")):
        params["warmup"] = phase_figures(warmup, timeline.phase_entries(None), plan.scenario.warmup)
        measured = timeline.phase_entries(None)  # ending at the last record (a consumer's last window runs on)
        start_ns, end_ns = (measured[0].start_ns, min(measured[-1].end_ns, end_ns or measured[-1].end_ns)) \
            if measured else (None, None)
        records, payload_bytes = sum(e.records for e in measured), sum(e.payload_bytes for e in measured)
    errors = [f"{w.name}: {w.error}" for w in workers if w.error]
    config_role = "producer" if role == "produce" else "consumer"
    effective = outcomes[0].effective_config.get(config_role, {}) if outcomes else {}
    return Run(
        client=plan.scenario.client,
        client_version=next((o.client_version for o in outcomes if o.client_version), ""),
        scenario=role,
        params=params,
        stats=stats_from(histograms),
        throughput=merge.throughput(records, payload_bytes, start_ns, end_ns),
        counters=counters,
        resources=merge.resources(outcomes),
        duration_s=(end_ns - start_ns) / 1e9 if start_ns is not None and end_ns is not None else 0.0,
        config={config_role: redact(effective), "topic": redact(plan.settings.values("topic"))},
        not_applicable=plan.not_applicable,
        timings=_timings(outcomes),
        timeline=timeline.as_dicts() if timeline else [],
        workers=[w.entry() for w in workers],
        nodes=per_node(role, workers),
        error="; ".join(errors) or None,
    )


def phase_figures(warmup: list[TimelineEntry], measured: list[TimelineEntry], seconds: float) -> dict:
    """What the warm-up did, apart from the figures: its span, records, rate and latencies, and when it ended."""
    metric = warmup[0].metric
    histogram = phase_histograms(warmup).get(metric)
    span_s = (warmup[-1].end_ns - warmup[0].start_ns) / 1e9
    records = sum(e.records for e in warmup)
    figures = {"seconds": seconds, "span_s": round(span_s, 3), "records": records,
               "records_per_s": records / span_s if span_s > 0 else 0.0, "metric": metric,
               "measured_from_s": warmup[-1].t_s, "measured_records": sum(e.records for e in measured)}
    if histogram is not None and histogram.count:
        figures.update(zip(("p50_ms", "p99_ms", "max_ms"), histogram.percentiles_ms(50, 99, 100)))
    return figures


def per_node(role: str, workers: list[fleet.FleetWorker]) -> dict[str, dict]:
    """Each node's figures beside the totals, when the workers ran on several: its workers' counts summed and their
    histograms merged bucket for bucket, over the node's own span."""
    by_node: dict[str, list[Outcome]] = {}
    for worker in workers:
        if (node := worker.process.placement.get("node")) and worker.outcome is not None:
            by_node.setdefault(node, []).append(worker.outcome)
    if len(by_node) < 2:
        return {}
    figures = {}
    for node, outcomes in by_node.items():
        counters = merge.sum_counters(outcomes)
        records = counters.get("acked" if role == "produce" else "received", 0)
        figures[node] = {"workers": len(outcomes), "records": records,
                         "throughput": merge.throughput(records, counters.get("payload_bytes", 0), *merge.wall_span(outcomes)),
                         "stats": {k: v.model_dump() for k, v in stats_from(merge.merge_histograms(outcomes)).items()}}
    return figures


def _timings(outcomes: list[Outcome]) -> dict[str, float]:
    timings: dict[str, float] = {}
    for outcome in outcomes:
        for key, value in outcome.timings.items():
            timings[key] = max(timings.get(key, value), value)  # the slowest worker is the one everyone waited for
    return timings


def _params(plan: ThroughputPlan) -> dict:
    s = plan.scenario
    return {"size_bytes": [len(p) for p in plan.payloads] if len(plan.payloads) > 1 else len(plan.payloads[0]),
            "payloads": [str(p) for p in s.payload] or "generated (random bytes)", "count": s.count,
            "duration_s": s.duration, "rate": getattr(s, "rate", -1), "producers": getattr(s, "producers", 1),
            "consumers": s.consumers, "partitions": s.partitions, "replication_factor": getattr(s, "replication_factor", 1),
            **({"topics": s.topics} if getattr(s, "topics", 1) > 1 else {}),
            **({"keys": s.keys} if getattr(s, "keys", "none") != "none" else {}),
            **({"subscriptions": s.subscriptions} if getattr(s, "subscriptions", 1) > 1 else {}),
            "client": s.client,
            **(effective_params(plan) if plan.role == "produce" else {})}


def effective_params(plan: ThroughputPlan) -> dict:
    """acks and compression as the producer ran them, and where each value came from (`sources`): a setting given
    (its option, file or profile), or the client's own default."""
    values, sources = {}, {}
    for param, (name, option) in {"acks": ("acks", "--acks"), "compression": ("compression.type", "--compression")}.items():
        given = plan.settings.producer.get(name)
        if given is not None:  # the scenario's own option is layered in as kafkabench's default
            values[param], sources[param] = given.value, option if given.source == "kafkabench" else given.source
        else:
            values[param], sources[param] = default_of(plan.scenario.client, "producer", name), "the client's default"
    return {**values, "sources": sources}

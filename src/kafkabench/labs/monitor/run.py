"""`kafkabench monitor`: every interval, one probe per partition of the probe topic, read back in this process, and
the consumer lag of the watched groups; the figures go to the Prometheus endpoint as they happen, and one window
per interval to the terminal (a table, or a JSON line with `--json-lines`) and to the result's timeline.

It runs until `--duration` or Ctrl-C, which is its normal end: the result document is written either way. The probe
topic is brought back in shape (a partition led by each broker) every SHAPE_EVERY_S.
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

from prometheus_client import start_http_server

from kafkabench.admin import KafkaAdmin
from kafkabench.cluster.target import Target
from kafkabench.core.events import Listener
from kafkabench.core.histogram import LatencyHistogram
from kafkabench.core.results import ResultDocument, Run, stats_from, write_result
from kafkabench.errors import ConfigError, KafkaAdminError
from kafkabench.labs.document import new_document
from kafkabench.labs.monitor.lag_collector import LagCollector
from kafkabench.labs.monitor.metrics import MonitorMetrics
from kafkabench.labs.monitor.probe_topic import ensure_probe_topic
from kafkabench.labs.monitor.prober import BrokerWindow, Prober, nearest_rank_ms
from kafkabench.labs.monitor.report import window_table
from kafkabench.labs.monitor.scenario import MonitorScenario

SHAPE_EVERY_S = 30.0
LAG_MIN_INTERVAL_S = 1.0  # lag is polled at most once a second: a dozen admin requests per poll
MONITOR_GROUPS = re.compile(r"^kafkabench-monitor-[0-9a-f]{16}$")  # monitors' own groups are probes, not consumers
ADMIN_TIMEOUT_S = 10.0


def run_monitor(scenario: MonitorScenario, target: Target, out_dir: Path, listener: Listener) -> ResultDocument:
    out_dir.mkdir(parents=True, exist_ok=True)
    document = new_document("monitor", target, scenario.model_dump(mode="json", exclude_none=True))
    run = Run(client="confluent", scenario="monitor", params={"probe_topic": scenario.probe_topic})
    document.runs.append(run)
    metrics = MonitorMetrics()
    server = _serve(metrics, scenario, listener)
    prober = Prober(target.connection, scenario.probe_topic, scenario.sla, scenario.interval, metrics)
    lag = LagCollector(target.connection, scenario.groups, MONITOR_GROUPS, scenario.lag_window, metrics)
    watch = _Watch(run, scenario.interval)
    try:
        _reshape(target, scenario, prober)
        lag.start(max(scenario.interval, LAG_MIN_INTERVAL_S))
        start = time.monotonic()
        next_shape = start + SHAPE_EVERY_S
        deadline = start + scenario.duration if scenario.duration else float("inf")
        tick = start
        while tick < deadline:
            tick += scenario.interval
            prober.probe(int(min(tick, deadline) * 1e9))
            prober.commit()
            now = time.monotonic()
            window = watch.add(now - start, prober.take_window(), lag.latest)
            listener.window("monitor", json.dumps(window) if scenario.json_lines else window_table(window))
            if now >= next_shape:
                _reshape(target, scenario, prober)
                next_shape = now + SHAPE_EVERY_S
    except KeyboardInterrupt:
        pass  # a watch ends when it is told to: what it saw is the result
    finally:
        lag.stop()
        prober.close()
        if server is not None:
            server.shutdown()
        watch.finish()
        write_result(document, out_dir)
    return document


def _serve(metrics: MonitorMetrics, scenario: MonitorScenario, listener: Listener):
    if not scenario.metrics_port:
        return None
    try:
        server, _ = start_http_server(scenario.metrics_port, scenario.metrics_host, registry=metrics.registry)
    except OSError as exc:
        raise ConfigError(f"--metrics-port {scenario.metrics_port} on {scenario.metrics_host}: {exc.strerror}; choose "
                          "another port, or 0 for no endpoint") from exc
    listener.note(f"metrics: http://{scenario.metrics_host}:{scenario.metrics_port}/metrics")
    return server


def _reshape(target: Target, scenario: MonitorScenario, prober: Prober) -> None:
    try:
        with KafkaAdmin(target.connection, timeout_s=ADMIN_TIMEOUT_S) as admin:
            info = ensure_probe_topic(admin, scenario.probe_topic)
    except KafkaAdminError:
        if not prober.leaders:
            raise
        return  # a broker is down: the topic keeps its shape until the next look
    prober.watch({p.partition: p.leader if p.leader is not None else p.replicas[0] for p in info.partitions})
    prober.find_coordinator()


class _Watch:
    """The windows as the result keeps them: a bounded timeline, totals in counters, the roundtrip of every probe in
    one histogram, outages (a broker's probes lost or failed, until a window without) as bands."""

    def __init__(self, run: Run, interval_s: float) -> None:
        self.run = run
        self.timeline = Timeline(interval_s)
        self.totals = dict.fromkeys(BrokerWindow.COUNTS, 0)
        self.roundtrip = LatencyHistogram()
        self.outages: dict[int, dict] = {}  # broker -> the outage under way
        run.params["outages"] = []

    def add(self, t_s: float, brokers: dict[int, BrokerWindow], groups: dict) -> dict:
        every = sorted(value for figures in brokers.values() for value in figures.roundtrip_us)
        counts = dict.fromkeys(BrokerWindow.COUNTS, 0)
        for broker, figures in brokers.items():
            for name in BrokerWindow.COUNTS:
                counts[name] += getattr(figures, name)
            for value in figures.roundtrip_us:
                self.roundtrip.record_ns(value * 1000)
            self._outage(broker, t_s, bool(figures.lost or figures.failed))
        for name, count in counts.items():
            self.totals[name] += count
        self.timeline.add({"t_s": round(t_s, 3), **counts, "p50_ms": nearest_rank_ms(every, 0.50),
                           "p99_ms": nearest_rank_ms(every, 0.99), "max_ms": every[-1] / 1000 if every else None})
        return {"t_s": round(t_s, 3), "brokers": {str(b): f.to_dict() for b, f in brokers.items()},
                "groups": {group: lag.to_dict() for group, lag in groups.items()}}

    def _outage(self, broker: int, t_s: float, failing: bool) -> None:
        under_way = self.outages.get(broker)
        if failing and under_way is None:
            self.outages[broker] = under_way = {"fault": "probes lost", "broker": broker, "fired_s": round(t_s, 3),
                                                "healed_s": None}
            self.run.params["outages"].append(under_way)
        elif not failing and under_way is not None:
            under_way["healed_s"] = round(t_s, 3)
            del self.outages[broker]

    def finish(self) -> None:
        self.run.counters = dict(self.totals)
        self.run.stats = stats_from({"roundtrip": self.roundtrip})
        self.run.timeline = self.timeline.entries()
        self.run.duration_s = self.run.timeline[-1]["t_s"] if self.run.timeline else 0.0


class Timeline:
    """At most CAPACITY entries however long the watch: when full, neighbouring entries are merged in pairs, and later
    windows are gathered two (four, ...) to an entry. Counts add up exactly and the max roundtrip is kept; an entry of
    several windows has no p50 / p99 (percentiles are never averaged: the run's stats hold them for every probe)."""

    CAPACITY = 2000

    def __init__(self, interval_s: float) -> None:
        self.interval_s = interval_s
        self._entries: list[dict] = []
        self._pending: dict | None = None
        self._per_entry = 1

    def add(self, window: dict) -> None:
        window = {**window, "windows": 1}
        self._pending = window if self._pending is None else _merged(self._pending, window)
        if self._pending["windows"] >= self._per_entry:
            self._entries.append(self._pending)
            self._pending = None
        if len(self._entries) > self.CAPACITY:
            pairs = zip(self._entries[0::2], self._entries[1::2])
            self._entries = [_merged(a, b) for a, b in pairs] + self._entries[len(self._entries) // 2 * 2:]
            self._per_entry *= 2

    def entries(self) -> list[dict]:
        return [{**entry, "metric": "roundtrip", "records": entry["received"],
                 "records_per_s": entry["received"] / (entry["windows"] * self.interval_s)}
                for entry in self._entries + ([self._pending] if self._pending else [])]


def _merged(a: dict, b: dict) -> dict:
    merged = {"t_s": b["t_s"], "windows": a["windows"] + b["windows"], "p50_ms": None, "p99_ms": None,
              "max_ms": max((x for x in (a["max_ms"], b["max_ms"]) if x is not None), default=None)}
    return {**merged, **{name: a[name] + b[name] for name in BrokerWindow.COUNTS}}

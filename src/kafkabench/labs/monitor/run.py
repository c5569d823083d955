"""`kafkabench monitor`: its parts (the prober, the lag collector, the broker watch) run in processes of their own
(labs.monitor.parts); this process serves the Prometheus endpoint, gathers what the parts send into one window per
interval for the terminal (a table, or a JSON line with `--json-lines`) and the result's timeline, and starts a part
again when it ends. It runs no Kafka client itself, so nothing a client library does can take the endpoint down.

It runs until `--duration` or Ctrl-C, which is its normal end: the result document is written either way.
"""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

from prometheus_client import start_http_server

from kafkabench.cluster.target import Target
from kafkabench.core.events import Listener
from kafkabench.core.histogram import LatencyHistogram
from kafkabench.core.results import ResultDocument, Run, stats_from, write_result
from kafkabench.errors import ConfigError
from kafkabench.labs.document import new_document
from kafkabench.labs.monitor.brokers import BrokerStates
from kafkabench.labs.monitor.metrics import MonitorMetrics
from kafkabench.labs.monitor.parts import Parts
from kafkabench.labs.monitor.prober import BrokerWindow, nearest_rank_ms
from kafkabench.labs.monitor.scenario import MonitorScenario
from kafkabench.labs.monitor.screen import Screens

FIRST_LOOK_S = 30.0  # the parts start (a Python process and its clients each) and take their first look


def run_monitor(scenario: MonitorScenario, target: Target, out_dir: Path, listener: Listener,
                stop: threading.Event | None = None) -> ResultDocument:
    """Watch until the duration, Ctrl-C or `stop` (a watch embedded in another program ends by it)."""
    stop = stop or threading.Event()
    out_dir.mkdir(parents=True, exist_ok=True)
    document = new_document("monitor", target, scenario.model_dump(mode="json", exclude_none=True))
    run = Run(client="confluent", scenario="monitor", params={"probe_topic": scenario.probe_topic})
    document.runs.append(run)
    metrics = MonitorMetrics()
    server = _serve(metrics, scenario, listener)

    def note(message: str) -> None:
        document.notes.append(message)
        listener.note(message)

    parts = Parts(target.connection, scenario, metrics, note)
    brokers = BrokerStates(metrics)
    watch = _Watch(run, scenario.interval)
    screens = Screens()
    groups: dict[str, dict] = {}
    probes: dict[int, BrokerWindow] = {}

    def absorb(messages: list[tuple[str, dict]]) -> None:
        nonlocal groups
        for _part, message in messages:
            if message["kind"] == "probes":
                for broker, figures in message["brokers"].items():
                    probes.setdefault(int(broker), BrokerWindow()).add(BrokerWindow(**figures))
            elif message["kind"] == "lag":
                groups = message["groups"]
            elif message["kind"] == "brokers":
                brokers.saw(message, time.monotonic())

    try:
        parts.start()
        looking = time.monotonic()  # the first window shows the brokers: the parts' first look is awaited, bounded
        while not brokers.known() and time.monotonic() - looking < FIRST_LOOK_S:
            absorb(parts.receive(until_s=time.monotonic() + 0.1))
        start = time.monotonic()
        deadline = start + scenario.duration if scenario.duration else float("inf")
        tick = start
        while tick < deadline and not stop.is_set():
            tick = min(tick + scenario.interval, deadline)
            absorb(parts.receive(until_s=tick))
            now = time.monotonic()
            window = watch.add(now - start, probes, groups, brokers.view(now), parts.states())
            probes = {}
            listener.window("monitor", json.dumps(window) if scenario.json_lines else screens.next(window))
    except KeyboardInterrupt:
        pass  # a watch ends when it is told to: what it saw is the result
    finally:
        parts.stop()
        if server is not None:
            server.shutdown()
        watch.finish(parts.states())
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


class _Watch:
    """The windows as the result keeps them: a bounded timeline, totals in counters, the roundtrip of every probe in
    one histogram, outages (a broker's probes lost or failed, until a window without) as bands, and each change of a
    broker's state."""

    def __init__(self, run: Run, interval_s: float) -> None:
        self.run = run
        self.timeline = Timeline(interval_s)
        self.totals = dict.fromkeys(BrokerWindow.COUNTS, 0)
        self.roundtrip = LatencyHistogram()
        self.outages: dict[int, dict] = {}  # broker -> the outage under way
        self.availability: dict[int, float] = {}  # the last one the prober gave: a window without probes keeps it
        self.states: dict[int, str] = {}
        run.params["outages"] = []
        run.params["broker_states"] = []

    def add(self, t_s: float, probes: dict[int, BrokerWindow], groups: dict, liveness: dict[int, dict],
            parts: dict[str, dict]) -> dict:
        every = sorted(value for figures in probes.values() for value in figures.roundtrip_us)
        counts = dict.fromkeys(BrokerWindow.COUNTS, 0)
        for broker, figures in probes.items():
            for name in BrokerWindow.COUNTS:
                counts[name] += getattr(figures, name)
            for value in figures.roundtrip_us:
                self.roundtrip.record_ns(value * 1000)
            self._outage(broker, t_s, bool(figures.lost or figures.failed))
            if figures.availability is not None:
                self.availability[broker] = figures.availability
        for name, count in counts.items():
            self.totals[name] += count
        for broker, seen in liveness.items():
            if self.states.get(broker) != seen["state"]:
                self.states[broker] = seen["state"]
                self.run.params["broker_states"].append({"broker": broker, "state": seen["state"], "t_s": round(t_s, 3)})
        self.timeline.add({"t_s": round(t_s, 3), **counts, "p50_ms": nearest_rank_ms(every, 0.50),
                           "p99_ms": nearest_rank_ms(every, 0.99), "max_ms": every[-1] / 1000 if every else None})
        brokers = {}
        for broker in sorted(set(probes) | set(liveness) | set(self.availability)):
            figures = probes.get(broker, BrokerWindow())
            figures.availability = self.availability.get(broker)
            seen = liveness.get(broker, {"state": "unknown", "state_for_s": None, "since_probe_leader_s": None})
            brokers[str(broker)] = {**figures.to_dict(), **seen}
        return {"t_s": round(t_s, 3), "brokers": brokers, "groups": groups, "parts": parts}

    def _outage(self, broker: int, t_s: float, failing: bool) -> None:
        under_way = self.outages.get(broker)
        if failing and under_way is None:
            self.outages[broker] = under_way = {"fault": "probes lost", "broker": broker, "fired_s": round(t_s, 3),
                                                "healed_s": None}
            self.run.params["outages"].append(under_way)
        elif not failing and under_way is not None:
            under_way["healed_s"] = round(t_s, 3)
            del self.outages[broker]

    def finish(self, parts: dict[str, dict]) -> None:
        self.run.counters = {**self.totals, "part_restarts": sum(part["restarts"] for part in parts.values())}
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

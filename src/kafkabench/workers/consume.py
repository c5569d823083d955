"""The consume scenario: read a topic in a group as fast as the client does, measure what arrives.

params: group, from (earliest | latest), count | duration_s, interval_s, check (every value must be one of
the payloads), idle_timeout_s (after start, no record for this long ends the run normally).
`e2e`: a record's `kb-sent-ns` header (intended send time) to the value in hand, on this host's monotonic
clock. `rebalance_s`: subscribe -> partitions assigned; `first_record_s`: start -> first record.
"""

from __future__ import annotations

import collections
import hashlib
import threading
import time

from kafkabench.core.clock import Clock, monotonic_ns
from kafkabench.core.protocol import Outcome, Task
from kafkabench.core.windows import WindowedStats
from kafkabench.workers.adapters.base import AdapterError, KafkaClient
from kafkabench.workers.throughput_run import STAMP_HEADER, Emit, RunFailed, StopConditions, emit_due, emit_last, outcome

POLL_S = 0.1
METRICS = ("e2e",)


class ConsumeRun:
    def __init__(self, client: KafkaClient, task: Task, stop: threading.Event, clock: Clock = monotonic_ns) -> None:
        self.client = client
        self.task = task
        self.params = task.params
        self.clock = clock
        self.until = StopConditions(task.params, stop, clock)
        self.stats = WindowedStats(METRICS, task.params.get("interval_s", 1.0), clock, clock())
        self.counters = collections.Counter({"received": 0, "unstamped": 0, "errors": 0})
        self.expected = set(task.payload_sha256s) if task.params.get("check") else None
        self.timings: dict[str, float] = {}
        self.first_ns: int | None = None
        self.last_ns: int | None = None
        self._cpu_start = time.process_time()

    def open(self) -> None:
        config = {**self.task.consumer_config}
        started = self.clock()
        try:
            self.client.open_consumer(self.task.bootstrap_servers, config)
            self.client.subscribe(self.task.topic, self.task.timeout_s)
        except AdapterError as exc:
            raise RunFailed("failure", str(exc)) from exc
        self.timings["rebalance_s"] = (self.clock() - started) / 1e9

    def run(self, emit: Emit) -> None:
        start = self.until.begin()
        self.stats = WindowedStats(METRICS, self.params.get("interval_s", 1.0), self.clock, start)
        idle_ns = int(self.params.get("idle_timeout_s", self.task.timeout_s) * 1e9)
        last_seen = start
        while not self.until.reached(self.counters["received"]):
            try:
                batch = self.client.poll_batch(POLL_S)
            except AdapterError as exc:
                raise RunFailed("failure", str(exc)) from exc
            now = self.clock()
            if batch:
                last_seen = now
                self._take(batch, now)
            elif now - last_seen > idle_ns:
                self.timings["idle_stop_s"] = idle_ns / 1e9
                break
            emit_due(self.stats, self.counters["received"], emit)
        emit_last(self.stats, self.counters["received"], emit)

    def _take(self, batch, now: int) -> None:
        """One clock reading per batch: every record of it was in hand at that moment."""
        if self.first_ns is None:
            self.first_ns = now
            self.timings["first_record_s"] = (now - self.until.start_ns) / 1e9
        self.last_ns = now
        for record in batch:
            value = record.value or b""
            self.counters["received"] += 1
            self.stats.count(records=1, payload_bytes=len(value))
            stamp = next((v for k, v in record.headers or () if k == STAMP_HEADER), None)
            if stamp is None:
                self.counters["unstamped"] += 1
            else:
                self.stats.record("e2e", now - int.from_bytes(stamp, "big", signed=True))
            if self.expected is not None and hashlib.sha256(value).hexdigest() not in self.expected:
                raise RunFailed("integrity", f"record at {record.where} matches none of the {len(self.expected)} payloads")

    def outcome(self, version: str) -> Outcome:
        counters = {**self.counters, "payload_bytes": self.stats.payload_bytes}
        try:
            config = self.client.effective_config()
        except Exception as exc:
            config = {"error": {"effective_config": str(exc)}}
        return outcome(self.stats, version, counters, config, self.first_ns, self.last_ns, self._cpu_start, self.timings)

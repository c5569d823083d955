"""The produce scenario (seed 001): send as fast as allowed on an open-loop schedule, measure every ack.

params: core.protocol.ProduceParams (count | duration_s, rate_per_s, interval_s, stamp, records_file).
`publish_delay`: intended -> actual send call (only with a rate). `publish_latency`: send call -> ack.
"""

from __future__ import annotations

import collections
import functools
import itertools
import threading
import time
from pathlib import Path

from kafkabench.core.clock import Clock, monotonic_ns
from kafkabench.core.protocol import Outcome, ProduceParams, Task
from kafkabench.core.rate import OpenLoopSchedule, wait_until
from kafkabench.core.records_file import read_records
from kafkabench.core.windows import WindowedStats
from kafkabench.workers.adapters.base import AdapterError, KafkaClient, QueueFull
from kafkabench.workers.throughput_run import STAMP_HEADER, Emit, RunFailed, StopConditions, emit_due, emit_last, outcome

SERVE_EVERY = 256  # sends between serving delivery callbacks and checking the window
METRICS = ("publish_latency", "publish_delay")


class ProduceRun:
    def __init__(self, client: KafkaClient, task: Task, params: ProduceParams, payloads: list[bytes],
                 stop: threading.Event, clock: Clock = monotonic_ns) -> None:
        self.client = client
        self.task = task
        self.payloads = payloads
        self.params = params
        self.clock = clock
        self.until = StopConditions(params, stop, clock)
        self.stats = WindowedStats(METRICS, params.interval_s, clock, clock())
        self.counters = collections.Counter({"sent": 0, "acked": 0, "errors": 0})
        self.start_ns: int | None = None
        self.last_ack_ns: int | None = None
        self._cpu_start = time.process_time()
        self._first_error = ""

    def open(self) -> None:
        try:
            self.client.open_producer(self.task.bootstrap_servers, self.task.producer_config, wire_stats=True)
        except AdapterError as exc:
            raise RunFailed("config", str(exc)) from exc

    def run(self, emit: Emit) -> None:
        start = self.until.begin()
        self.stats = WindowedStats(METRICS, self.params.interval_s, self.clock, start)
        rate = self.params.rate_per_s
        schedule = OpenLoopSchedule(rate, start) if rate > 0 else None
        stamp = self.params.stamp
        topic, clock, send = self.task.topic, self.clock, self.client.send
        count = self.until.count if self.until.count is not None else float("inf")
        values = self._values()
        value = next(values, None)
        index = 0
        while value is not None and index < count and not (index % SERVE_EVERY == 0 and self.until.reached(index)):
            intended = wait_until(schedule.intended(index), clock, while_waiting=self._serve) if schedule else clock()
            headers = [(STAMP_HEADER, intended.to_bytes(8, "big", signed=True))] if stamp else None
            sent = clock() if schedule else intended
            try:
                send(topic, None, value, functools.partial(self._acked, sent, len(value)), headers)
            except QueueFull:
                self.client.poll(0.005)  # the same message again, its intended time unchanged
                continue
            except AdapterError as exc:
                self._count_error(f"SendFailed: {exc}")
                continue
            if schedule:
                self.stats.record("publish_delay", sent - intended)
            self.start_ns = self.start_ns or sent
            self.counters["sent"] += 1
            index += 1
            value = next(values, None)
            if index % SERVE_EVERY == 0:
                self._serve()
                emit_due(self.stats, self.counters["acked"], emit)
                self._check_progress()
        self._drain(emit)

    def _values(self):
        if self.params.records_file is not None:
            return read_records(Path(self.params.records_file))
        return itertools.cycle(self.payloads)

    def _serve(self) -> None:
        self.client.poll(0)

    def _acked(self, sent_ns: int, size: int, error: str | None) -> None:
        now = self.clock()
        if error is None:
            self.stats.record("publish_latency", now - sent_ns)
            self.stats.count(records=1, payload_bytes=size)
            self.counters["acked"] += 1
            self.last_ack_ns = now
        else:
            self._count_error(error)

    def _count_error(self, error: str) -> None:
        kind = error.split(":", 1)[0].strip() or "Unknown"
        self.counters["errors"] += 1
        self.counters[f"errors.{kind}"] += 1
        self.stats.count(errors=1)
        self._first_error = self._first_error or error

    def _check_progress(self) -> None:
        """Sends failing and none acknowledged for timeout_s: nothing this run measures any more is real."""
        if not self.counters["errors"]:
            return
        since = self.last_ack_ns or self.start_ns or self.until.start_ns
        if self.clock() - since > self.task.timeout_s * 1e9:
            raise RunFailed("failure", f"{self.counters['errors']} sends failed ({self._first_error[:160]}) and none "
                                       f"succeeded for {self.task.timeout_s:g} s")

    def _drain(self, emit: Emit) -> None:
        deadline = self.clock() + int((self.task.timeout_s + 5) * 1e9)
        while self.client.flush(0.1) > 0:
            emit_due(self.stats, self.counters["acked"], emit)
            self._check_progress()
            if self.clock() > deadline:
                raise RunFailed("timeout", f"{self.counters['sent'] - self.counters['acked'] - self.counters['errors']} "
                                           f"sends still unacknowledged {self.task.timeout_s + 5:g} s after the last send")
        self._check_progress()
        emit_last(self.stats, self.counters["acked"], emit)

    def outcome(self, version: str) -> Outcome:
        counters = dict(self.counters)
        counters["payload_bytes"] = self.stats.payload_bytes
        try:
            wire = self.client.wire_bytes()
        except Exception:  # the measurements made must survive a client that cannot say
            wire = None
        if wire is not None:
            counters["wire_bytes"] = wire
        try:
            config = self.client.effective_config()
        except Exception as exc:
            config = {"error": {"effective_config": str(exc)}}
        return outcome(self.stats, version, counters, config, self.start_ns, self.last_ack_ns, self._cpu_start)

"""The consume scenario: read a topic in a group as fast as the client does, measure what arrives.

params: core.protocol.ConsumeParams (from, count | duration_s, interval_s, check, idle_timeout_s, decode).
`e2e`: a record's `kb-sent-ns` header (intended send time) to the value in hand, on this host's monotonic
clock. `rebalance_s`: subscribe -> partitions assigned; `first_record_s`: start -> first record. The run's
duration (for records/s) is start -> last record.
"""

from __future__ import annotations

import collections
import hashlib
import threading
import time

from kafkabench.core.clock import Clock, monotonic_ns
from kafkabench.core.protocol import ConsumeParams, DecodeSpec, Outcome, Task
from kafkabench.core.windows import WindowedStats
from kafkabench.workers.adapters.base import AdapterError, KafkaClient
from kafkabench.workers.throughput_run import STAMP_HEADER, Emit, RunFailed, StopConditions, emit_due, emit_last, outcome

POLL_S = 0.1
METRICS = ("e2e",)


def _decoder(spec: DecodeSpec | None):
    """Decode every value, as a consuming application would: bytes that only look right fail here."""
    if spec is None:
        return None
    from kafkabench.datasets.sources import open_dataset
    from kafkabench.formats.codecs import make_format

    return make_format(spec.format, open_dataset(spec.dataset)).decode


def _stamp(headers) -> bytes | None:
    for key, value in headers or ():
        if key == STAMP_HEADER:
            return value
    return None


class ConsumeRun:
    def __init__(self, client: KafkaClient, task: Task, params: ConsumeParams, stop: threading.Event,
                 clock: Clock = monotonic_ns) -> None:
        self.client = client
        self.task = task
        self.params = params
        self.clock = clock
        self.until = StopConditions(params, stop, clock)
        self.stats = WindowedStats(METRICS, params.interval_s, clock, clock())
        self.counters = collections.Counter({"received": 0, "unstamped": 0, "errors": 0})
        self.expected = set(task.payload_sha256s) if params.check else None
        self.decode = _decoder(params.decode)
        self.timings: dict[str, float] = {}
        self.early: list = []  # records that arrived while waiting for the start signal
        self.first_ns: int | None = None
        self.last_ns: int | None = None
        self._cpu_start = time.process_time()

    def open(self) -> None:
        started = self.clock()
        try:
            self.client.open_consumer(self.task.bootstrap_servers, self.task.consumer_config)
            self.client.subscribe(self.task.topic, self.task.timeout_s, at_end=self.params.start_from == "latest")
        except AdapterError as exc:
            raise RunFailed("failure", str(exc)) from exc
        self.timings["rebalance_s"] = (self.clock() - started) / 1e9

    def wait_for_start(self, started: threading.Event, stop: threading.Event) -> None:
        """Keep polling (fetching paused) until the start signal: another member joining the group needs
        this one to take part in the rebalance. A record already in flight is kept for the run."""
        self.client.hold(True)
        try:
            while not started.is_set() and not stop.is_set():
                self.early.extend(self.client.poll_batch(POLL_S))
        except AdapterError as exc:
            raise RunFailed("failure", str(exc)) from exc
        finally:
            self.client.hold(False)

    def run(self, emit: Emit) -> None:
        start = self.until.begin()
        self.stats = WindowedStats(METRICS, self.params.interval_s, self.clock, start)
        idle_s = self.params.idle_timeout_s
        idle_ns = int((idle_s if idle_s is not None else self.task.timeout_s) * 1e9)
        last_seen = start
        while not self.until.reached(self.counters["received"]):
            try:
                batch, self.early = (self.early, []) if self.early else (self.client.poll_batch(POLL_S), [])
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
        if self.expected is not None:
            self._check(batch)
        self.counters["received"] += len(batch)
        self.stats.count(records=len(batch), payload_bytes=sum(len(r.value or b"") for r in batch))
        record_e2e, unstamped = self.stats.record, 0
        for record in batch:
            stamp = _stamp(record.headers)
            if stamp is None:
                unstamped += 1
            else:
                record_e2e("e2e", now - int.from_bytes(stamp, "big", signed=True))
        self.counters["unstamped"] += unstamped
        if self.decode is not None:
            for record in batch:
                try:
                    self.decode(record.value or b"")
                except Exception as exc:  # any decoder's complaint means the bytes are not what was written
                    raise RunFailed("integrity", f"record at {record.where} does not decode: {exc}") from exc

    def _check(self, batch) -> None:
        for index, record in enumerate(batch):
            if hashlib.sha256(record.value or b"").hexdigest() not in self.expected:
                self.counters["received"] += index
                self.stats.count(records=index)
                raise RunFailed("integrity", f"record at {record.where} matches none of the {len(self.expected)} payloads")

    def outcome(self, version: str) -> Outcome:
        counters = {**self.counters, "payload_bytes": self.stats.payload_bytes}
        try:
            config = self.client.effective_config()
        except Exception as exc:
            config = {"error": {"effective_config": str(exc)}}
        # from the start signal, not the first record: a run that got everything in one fetch still took time
        started = self.until.start_ns or None
        return outcome(self.stats, version, counters, config, started, self.last_ns, self._cpu_start, self.timings)

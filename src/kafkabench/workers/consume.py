"""The consume scenario: read a topic in a group as fast as the client does, measure what arrives.

params: core.protocol.ConsumeParams (from, count | duration_s, interval_s, check, idle_timeout_s, decode).
`e2e`: a record's `kb-sent-ns` header (intended send time) to the value in hand, on this host's monotonic
clock. With params.record_time_e2e, also `e2e_record_time` as OpenMessaging Benchmark measures its e2e: this
host's wall clock minus the record's timestamp (the producer's create time), in whole milliseconds, a sample at or
below 0 dropped (OMB records only positive ones). `rebalance_s`: subscribe -> partitions assigned;
`first_record_s`: clock start -> first record. The run's duration (for records/s) is clock start -> last record.
The clock starts at the start signal, or where fetching began when records fetched before the signal are in hand
(ConsumeRun.clock_start_ns).

`idle_s`: after the first record, the time spent in polls that brought nothing, each stretch from the first empty
poll to the poll that brought records again; `stalls` counts the stretches of STALL_NS or more. Reading a backlog,
such a stretch is the client not fetching, not the broker being slow: librdkafka stops fetching a partition for
fetch.queue.backoff.ms (1 s) whenever queued.min.messages (100,000) records wait in its queue, and a 1M-record read
took 0.7 s plus 0 to 4 of those seconds, run after run (docs/benchmarks.md). They say which mode a run measured.
"""

from __future__ import annotations

import collections
import hashlib
import threading
import time
from pathlib import Path

import numpy as np

from kafkabench.core.clock import Clock, monotonic_ns
from kafkabench.core.protocol import RECORD_TIME, ConsumeParams, DecodeSpec, Outcome, Task
from kafkabench.core.windows import WindowedStats, ns_to_us
from kafkabench.workers.adapters.base import AdapterError, Batch, KafkaClient
from kafkabench.workers.throughput_run import Emit, RunFailed, StopConditions, emit_due, emit_last, outcome

POLL_S = 0.1
MAX_BATCH = 10_000  # records asked of one poll
STALL_NS = 500_000_000  # an idle stretch this long is a pause in fetching: a fetch round trip takes ~1 ms here
METRICS = ("e2e",)


def _decoder(spec: DecodeSpec | None):
    """Decode every value, as a consuming application would: bytes that only look right fail here."""
    if spec is None:
        return None
    from kafkabench.datasets.sources import open_dataset
    from kafkabench.formats.codecs import make_format

    return make_format(spec.format, open_dataset(spec.dataset)).decode


class PayloadCheck:
    """Every value must be one of the task's payloads: compared byte for byte with the payload files (their
    SHA-256 checked against the task's first), or by SHA-256 where the files are not at hand."""

    def __init__(self, task: Task) -> None:
        self.count = len(task.payload_sha256s)
        payloads = [Path(p).read_bytes() for p in task.payload_files if Path(p).is_file()]
        if sorted(hashlib.sha256(p).hexdigest() for p in payloads) == sorted(task.payload_sha256s):
            self._payloads, self._sha256s = set(payloads), None
        else:
            self._payloads, self._sha256s = None, set(task.payload_sha256s)

    def first_mismatch(self, values: list[bytes | None]) -> int | None:
        if self._payloads is not None and len(self._payloads) == 1:
            [payload] = self._payloads
            if values.count(payload) == len(values):  # one C-level pass of byte comparisons
                return None
        for index, value in enumerate(values):
            if not self._matches(value or b""):
                return index
        return None

    def _matches(self, value: bytes) -> bool:
        if self._payloads is not None:
            return value in self._payloads
        return hashlib.sha256(value).hexdigest() in self._sha256s


class ConsumeRun:
    def __init__(self, client: KafkaClient, task: Task, params: ConsumeParams, stop: threading.Event,
                 clock: Clock = monotonic_ns) -> None:
        self.client = client
        self.task = task
        self.params = params
        self.clock = clock
        self.until = StopConditions(params, stop, clock)
        self.metrics = METRICS + ((RECORD_TIME,) if params.record_time_e2e else ())
        self.stats = WindowedStats(self.metrics, params.interval_s, clock, clock())
        self.counters = collections.Counter({"received": 0, "unstamped": 0, "errors": 0, "stalls": 0})
        self.check = PayloadCheck(task) if params.check else None
        self.decode = _decoder(params.decode)
        self.timings: dict[str, float] = {}
        self.early: list[Batch] = []  # records that arrived while waiting for the start signal
        self.stops = params.stop_offsets
        self.first_ns: int | None = None
        self.started_ns: int | None = None  # where the clock started (clock_start_ns), once running
        self.last_ns: int | None = None
        self.idle_ns = 0
        self._cpu_start = time.process_time()

    def open(self) -> None:
        started = self.clock()
        try:
            self.client.open_consumer(self.task.bootstrap_servers, self.task.consumer_config)
            self.client.subscribe(self.params.topics or [self.task.topic], self.task.timeout_s,
                                  at_end=self.params.start_from == "latest",
                                  partitions=self.params.partitions)
        except AdapterError as exc:
            raise RunFailed("failure", str(exc)) from exc
        self.timings["rebalance_s"] = (self.clock() - started) / 1e9

    def wait_for_start(self, started: threading.Event, stop: threading.Event) -> None:
        """Keep polling (fetching paused) until the start signal: another member joining the group needs
        this one to take part in the rebalance. A record already in flight is kept for the run."""
        self.client.hold(True)
        try:
            while not started.is_set() and not stop.is_set():
                batch = self.client.poll_batch(POLL_S, MAX_BATCH)
                if len(batch):
                    self.early.append(batch)
        except AdapterError as exc:
            raise RunFailed("failure", str(exc)) from exc
        finally:
            self.client.hold(False)

    def run(self, emit: Emit) -> None:
        self._cpu_start = time.process_time()  # from the start signal, as ProduceRun and the Java worker count it
        self.until.begin()
        start = self.started_ns = self.clock_start_ns()
        self.stats = WindowedStats(self.metrics, self.params.interval_s, self.clock, start)
        idle_s = self.params.idle_timeout_s
        idle_ns = int((idle_s if idle_s is not None else self.task.timeout_s) * 1e9)
        last_seen, count = start, self.until.count
        idle_since: int | None = None  # where the current stretch of empty polls began
        while not self.until.reached(self.counters["received"]):
            limit = MAX_BATCH if count is None else min(MAX_BATCH, count - self.counters["received"])
            asked = self.clock()
            try:
                batch = self._early(limit) or self.client.poll_batch(POLL_S, limit)
            except AdapterError as exc:
                raise RunFailed("failure", str(exc)) from exc
            now = self.clock()
            if len(batch):
                if idle_since is not None:
                    self._idled(now - idle_since)
                    idle_since = None
                last_seen = now
                self._take(batch, now)
            elif now - last_seen > idle_ns:
                self.timings["idle_stop_s"] = idle_ns / 1e9
                break
            elif idle_since is None:
                idle_since = asked
            emit_due(self.stats, self.counters["received"], emit)
        self.timings["idle_s"] = self.idle_ns / 1e9
        emit_last(self.stats, self.counters["received"], emit)

    def _idled(self, span_ns: int) -> None:
        """A stretch without records ended; the wait for the first record is first_record_s, not idleness."""
        if self.first_ns is None:
            return
        self.idle_ns += span_ns
        if span_ns >= STALL_NS:
            self.counters["stalls"] += 1

    def clock_start_ns(self) -> int:
        """Where the clock starts: where fetching started. That is the start signal, unless records fetched before it
        are already in hand (a client that fetches while held): then where that fetching began, so they are not
        counted without the time it took to fetch them."""
        since = self.client.fetching_since_ns()
        return since if self.early and since is not None and since < self.until.start_ns else self.until.start_ns

    def _early(self, limit: int) -> Batch | None:
        if not self.early:
            return None
        batch = self.early.pop(0)
        if len(batch) > limit:
            self.early.insert(0, batch.subset(batch.records[limit:]))
            batch = batch.subset(batch.records[:limit])
        return batch

    def _take(self, batch: Batch, now: int) -> None:
        """One clock reading per batch: every record of it was in hand at that moment."""
        if self.stops is not None:
            batch = self._before_stops(batch)
            if not len(batch):
                return
        if self.first_ns is None:
            self.first_ns = now
            self.timings["first_record_s"] = (now - self.started_ns) / 1e9
        self.last_ns = now
        if self.check is not None:
            self._check(batch)
        received = len(batch)
        self.counters["received"] += received
        self.stats.count(records=received, payload_bytes=batch.payload_bytes())
        stamps = batch.stamps()
        if stamps:
            sent_ns = np.frombuffer(b"".join(stamps), dtype=">i8").astype(np.int64)
            self.stats.add_us("e2e", ns_to_us(now - sent_ns))
        self.counters["unstamped"] += received - len(stamps)
        if self.params.record_time_e2e:
            waited_ms = time.time_ns() // 1_000_000 - np.asarray(batch.timestamps_ms(), dtype=np.int64)
            self.stats.add_us(RECORD_TIME, waited_ms[waited_ms > 0] * 1000)
        if self.decode is not None:
            for index, value in enumerate(batch.values()):
                try:
                    self.decode(value or b"")
                except Exception as exc:  # any decoder's complaint means the bytes are not what was written
                    raise RunFailed("integrity", f"record at {batch.where(index)} does not decode: {exc}") from exc

    def _before_stops(self, batch: Batch) -> Batch:
        stops, inf = self.stops, float("inf")
        kept = [record for record, (_topic, partition, offset) in zip(batch.records, batch.positions())
                if offset < stops.get(partition, inf)]
        return batch if len(kept) == len(batch) else batch.subset(kept)

    def _check(self, batch: Batch) -> None:
        index = self.check.first_mismatch(batch.values())
        if index is not None:
            self.counters["received"] += index
            self.stats.count(records=index)
            raise RunFailed("integrity", f"record at {batch.where(index)} matches none of the {self.check.count} payloads")

    def outcome(self, version: str) -> Outcome:
        counters = {**self.counters, "payload_bytes": self.stats.payload_bytes}
        try:
            config = self.client.effective_config()
        except Exception as exc:
            config = {"error": {"effective_config": str(exc)}}
        # from where fetching started, not the first record: a run that got everything in one fetch still took time
        started = self.started_ns
        return outcome(self.stats, version, counters, config, started, self.last_ns, self._cpu_start, self.timings)

"""The produce scenario (seed 001): send as fast as allowed on an open-loop schedule, measure every ack.

params: core.protocol.ProduceParams (count | duration_s, rate_per_s, interval_s, stamp, records_file).
`publish_delay`: intended -> actual send call (only with a rate). `publish_latency`: send call -> ack.

Without a rate, records go to the client in batches (send_many) and acknowledgements are taken from the
AckLog once per batch: per record, only the client's own work and a list append are left. With a rate,
each record waits for its intended time and goes alone.
"""

from __future__ import annotations

import collections
import itertools
import random
import threading
import time
from collections.abc import Iterator
from pathlib import Path

from kafkabench.core.clock import Clock, monotonic_ns
from kafkabench.core.protocol import KEY_POOL, Outcome, ProduceParams, Task, pool_key
from kafkabench.core.rate import OpenLoopSchedule, wait_until
from kafkabench.core.records_file import read_records
from kafkabench.core.windows import WindowedStats, ns_to_us
from kafkabench.workers.acks import AckLog
from kafkabench.workers.adapters.base import AdapterError, KafkaClient
from kafkabench.workers.throughput_run import Emit, RunFailed, StopConditions, emit_due, emit_last, outcome

BATCH = 256  # sends between serving delivery callbacks, taking acknowledgements and checking the window
QUEUE_FULL_WAIT_S = 0.005
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
        sizes = {len(p) for p in payloads}
        self.size = sizes.pop() if len(sizes) == 1 and params.records_file is None else None
        self.acks = AckLog(sizes=self.size is None)
        self.counters = collections.Counter({"sent": 0, "acked": 0, "errors": 0})
        self.start_ns: int | None = None
        self.last_ack_ns: int | None = None
        self._cpu_start = time.process_time()
        self._first_error = ""

    def open(self) -> None:
        if self.params.warmup:
            raise RunFailed("config", "warmup: the Python worker has no JIT to warm; send warm-up records in a run of their own")
        try:
            self.client.open_producer(self.task.bootstrap_servers, self.task.producer_config,
                                      wire_stats=self.params.wire_bytes,
                                      acks=self.acks)
        except AdapterError as exc:
            raise RunFailed("config", str(exc)) from exc

    def run(self, emit: Emit) -> None:
        # CPU from the start signal, as the Java worker counts it: not the client's set-up, nor the worker's one
        # gc.collect() + freeze of the harness before it (30-50 ms, a tenth of a 10 s run at 1,000/s)
        self._cpu_start = time.process_time()
        start = self.until.begin()
        self.stats = WindowedStats(METRICS, self.params.interval_s, self.clock, start)
        self.start_ns = start
        if self.params.rate_per_s > 0:
            self._paced(emit, OpenLoopSchedule(self.params.rate_per_s, start))
        else:
            self._flat_out(emit)
        self._drain(emit)

    def _flat_out(self, emit: Emit) -> None:
        """As fast as the client takes records, in batches; each stamped with its send call if asked. With
        `partitions` (or `topics`), each batch goes to the next of them."""
        send_many, poll = self.client.send_many, self.client.poll
        stamp = self.clock if self.params.stamp else None
        values, count, keys = self._values(), self.until.count, self._keys()
        partitions, partition = itertools.cycle(self.params.partitions or [None]), None
        topics, topic = itertools.cycle(self.params.topics or [self.task.topic]), self.task.topic
        batch: list[bytes] = []
        batch_keys: list[bytes] | None = None
        sent = 0
        while True:
            if not batch:
                if self.until.reached(sent):
                    break
                batch = list(itertools.islice(values, BATCH if count is None else min(BATCH, count - sent)))
                if not batch:
                    break
                partition, topic = next(partitions), next(topics)
                batch_keys = None if keys is None else list(itertools.islice(keys, len(batch)))
            taken = send_many(topic, batch, stamp, partition, batch_keys)
            sent += taken
            self.counters["sent"] += taken
            if taken < len(batch):  # the client's queue is full: serve acks, then the rest again
                batch = batch[taken:]
                batch_keys = None if batch_keys is None else batch_keys[taken:]
                poll(QUEUE_FULL_WAIT_S)
            else:
                batch = []
                poll(0)
            self._take_acks(emit)

    def _paced(self, emit: Emit, schedule: OpenLoopSchedule) -> None:
        """Each record at its intended time, stamped with that time: a late send shows as publish_delay. With
        `partitions` (or `topics`), each record goes to the next of them. Per record: the wait, the send and one list
        append; the delays and the sent count go into the window in bulk (_paced_sent), with every take of the acks."""
        send_many, poll, clock = self.client.send_many, self.client.poll, self.clock
        partitions, topics = self.params.partitions or [None], self.params.topics or [self.task.topic]
        spread, stamp, reached, due = len(partitions), self.params.stamp, self.until.reached, self.stats.due
        values, index, delays, keys, spread_topics = self._values(), 0, [], self._keys(), len(topics)
        value, key = next(values, None), None if keys is None else [next(keys)]
        try:
            while value is not None and not reached(index):
                intended = schedule.intended(index)  # the due time, never the wake-up: a stall must show
                wait_until(intended, clock, poll)
                sent = clock()
                if not send_many(topics[index % spread_topics], (value,), (lambda: intended) if stamp else None,
                                 partitions[index % spread], key):
                    poll(QUEUE_FULL_WAIT_S)  # the same record again, its intended time unchanged
                    continue
                delays.append(sent - intended)
                index += 1
                value, key = next(values, None), None if keys is None else [next(keys)]
                if index % BATCH == 0 or due(sent):  # at a low rate the window's end comes first
                    self._paced_sent(delays)
                    self._serve()
                    self._take_acks(emit)
        finally:
            self._paced_sent(delays)

    def _paced_sent(self, delays: list[int]) -> None:
        """The paced sends since the last call: their delays into the open window, their count into `sent`."""
        if delays:
            self.stats.add_us("publish_delay", ns_to_us(delays))
            self.counters["sent"] += len(delays)
            delays.clear()

    def _keys(self) -> Iterator[bytes] | None:
        """Each record's key, as OMB's distributors pick them from its pool: in turn, or at random; None: no keys."""
        if self.params.keys == "round_robin":
            return map(pool_key, itertools.count())
        if self.params.keys == "random":
            draw = random.Random().randrange
            return (pool_key(draw(KEY_POOL)) for _ in itertools.count())
        return None

    def _values(self):
        if self.params.records_file is not None:
            return read_records(Path(self.params.records_file))
        return itertools.cycle(self.payloads)

    def _serve(self) -> None:
        self.client.poll(0)

    def _take_acks(self, emit: Emit) -> None:
        """Fold in what was acknowledged since the last take; close the window if its interval is over."""
        self._fold_acks()
        emit_due(self.stats, self.counters["acked"], emit)
        self._check_progress()

    def _fold_acks(self) -> None:
        latencies, payload_bytes, errors = self.acks.take()
        acked = len(latencies)
        if acked:
            self.last_ack_ns = self.clock()
            self.stats.add_us("publish_latency", latencies)
            self.stats.count(records=acked, payload_bytes=payload_bytes if payload_bytes is not None else acked * self.size)
            self.counters["acked"] += acked
        for error in errors:
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
            self._take_acks(emit)
            if self.clock() > deadline:
                raise RunFailed("timeout", f"{self.counters['sent'] - self.counters['acked'] - self.counters['errors']} "
                                           f"sends still unacknowledged {self.task.timeout_s + 5:g} s after the last send")
        self._take_acks(emit)
        emit_last(self.stats, self.counters["acked"], emit)

    def outcome(self, version: str) -> Outcome:
        self._fold_acks()  # a run ended early: what was acknowledged counts
        counters = dict(self.counters)
        counters["payload_bytes"] = self.stats.payload_bytes
        try:
            wire = self.client.wire_bytes() if self.params.wire_bytes else None
        except Exception:  # the measurements made must survive a client that cannot say
            wire = None
        if wire is not None:
            counters["wire_bytes"] = wire
        try:
            config = self.client.effective_config()
        except Exception as exc:
            config = {"error": {"effective_config": str(exc)}}
        return outcome(self.stats, version, counters, config, self.start_ns, self.last_ack_ns, self._cpu_start)

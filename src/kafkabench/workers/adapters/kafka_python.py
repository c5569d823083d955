"""kafka-python (pure Python)."""

from __future__ import annotations

import itertools
import time
from typing import Any

import kafka
from kafka import KafkaConsumer, KafkaProducer, TopicPartition
from kafka.errors import KafkaError, KafkaTimeoutError

from kafkabench.core.clock import monotonic_ns
from kafkabench.workers.acks import AckLog
from kafkabench.workers.adapters.base import (Ack, AckCallback, AdapterError, Answers, Batch, QueueFull, Record,
                                              SendRefused, printable, stamp_headers)


class Adapter:
    name = "kafka-python"

    def __init__(self) -> None:
        self._producer: KafkaProducer | None = None
        self._consumer: KafkaConsumer | None = None
        self._early: list = []
        self._held = False
        self._acks: AckLog | None = None
        self._callbacks = None
        self._answered = None

    def version(self) -> str:
        # CRC-32C of every record batch is pure Python unless the optional crc32c package is installed:
        # on large values that decides the latency, so the table says which one ran
        from kafka.record import util

        return f"{kafka.__version__} (crc32c: {'pure Python' if util.crc32c_c is None else 'C'})"

    def open_producer(self, bootstrap_servers: str, config: dict[str, Any], wire_stats: bool = False,
                      acks: AckLog | None = None, answers: list | None = None) -> None:
        self._acks = acks
        if acks is not None:
            self._callbacks = _ack_callbacks(acks)
        if answers is not None:
            self._answered = _keep_answer(answers.append)
        try:
            self._producer = KafkaProducer(bootstrap_servers=bootstrap_servers.split(","), **config)
        except (KafkaError, ValueError, TypeError) as exc:
            raise AdapterError(f"cannot create the kafka-python producer: {exc}") from exc

    def open_consumer(self, bootstrap_servers: str, config: dict[str, Any]) -> None:
        try:
            self._consumer = KafkaConsumer(bootstrap_servers=bootstrap_servers.split(","), **config)
        except (KafkaError, ValueError, TypeError) as exc:
            raise AdapterError(f"cannot create the kafka-python consumer: {exc}") from exc

    def send(self, topic, key, value, on_ack: AckCallback, headers=None) -> None:
        try:
            future = self._producer.send(topic, value=value, key=key, headers=headers)
        except KafkaTimeoutError as exc:  # buffer_memory full for max_block_ms
            raise QueueFull(str(exc)) from exc
        except KafkaError as exc:
            raise AdapterError(f"send failed: {exc}") from exc
        future.add_callback(lambda metadata: on_ack(Ack(None, metadata.partition, metadata.offset)))
        future.add_errback(lambda exc: on_ack(Ack(f"{type(exc).__name__}: {exc}")))

    def send_many(self, topic, values, stamp=None, partition=None) -> int:
        """Futures complete on kafka-python's I/O thread: the callbacks only append to the AckLog."""
        send, clock, failed = self._producer.send, monotonic_ns, self._acks.errors.append
        acked, refused = self._callbacks
        taken = 0
        for value in values:
            sent = clock()
            try:
                future = send(topic, value=value, headers=stamp_headers(stamp()) if stamp else None, partition=partition)
            except KafkaTimeoutError:  # buffer_memory full for max_block_ms
                return taken
            except KafkaError as exc:
                failed(f"SendFailed: {exc}")
            else:
                future.add_callback(acked, sent)
                future.add_errback(refused)
            taken += 1
        return taken

    def send_tracked(self, topic, values) -> int:
        """A future's callback and errback both keep (value, its metadata or exception), on the I/O thread."""
        send, answered, taken = self._producer.send, self._answered, 0
        for value in values:
            try:
                future = send(topic, value=value)
            except KafkaTimeoutError:  # buffer_memory full for max_block_ms
                return taken
            except KafkaError as exc:
                raise SendRefused(type(exc).__name__, taken) from exc
            future.add_both(answered, value)
            taken += 1
        return taken

    @staticmethod
    def read_answers(entries: list) -> Answers:
        values, partitions, offsets, errors = [], [], [], []
        for value, outcome in entries:
            failed = isinstance(outcome, BaseException)
            values.append(value)
            partitions.append(-1 if failed else outcome.partition)
            offsets.append(-1 if failed else outcome.offset)
            errors.append(type(outcome).__name__ if failed else None)
        return Answers(values, partitions, offsets, errors)

    def poll(self, timeout_s: float) -> None:
        time.sleep(timeout_s)  # callbacks run in kafka-python's own I/O thread

    def flush(self, timeout_s: float) -> int:
        try:
            self._producer.flush(timeout=timeout_s)
        except KafkaTimeoutError:
            return 1
        return 0

    def assign_at_end(self, topic: str, partition: int, timeout_s: float) -> None:
        tp = TopicPartition(topic, partition)
        self._consumer.assign([tp])
        try:
            end = self._consumer.end_offsets([tp], timeout_ms=int(timeout_s * 1000))[tp]
        except KafkaError as exc:
            raise AdapterError(f"cannot read the end offset of {topic}: {exc}") from exc
        self._consumer.seek(tp, end)

    def subscribe(self, topic: str, timeout_s: float, at_end: bool = False, partitions: list[int] | None = None) -> None:
        if partitions is not None:
            self._consumer.assign([TopicPartition(topic, p) for p in partitions])
        else:
            self._consumer.subscribe([topic])
        deadline = time.monotonic() + timeout_s
        while not self._consumer.assignment():
            if time.monotonic() > deadline:
                raise AdapterError(f"no partitions of {topic} assigned within {timeout_s:g} s")
            self._join(100)
        if at_end:
            self._consumer.seek_to_end(*self._consumer.assignment())
        for tp in self._consumer.assignment():
            self._consumer.position(tp)  # resolves the offset now, before any producer starts

    def _join(self, timeout_ms: int) -> None:
        # poll() drives the group protocol; records it returns before start are kept for poll_batch
        self._early += _flat(self._consumer.poll(timeout_ms=timeout_ms))

    def hold(self, held: bool) -> None:
        self._held = held
        assignment = self._consumer.assignment()
        if held:
            self._consumer.pause(*assignment)
        else:
            self._consumer.resume(*self._consumer.paused())

    def fetching_since_ns(self) -> int | None:
        return None  # held means paused: fetching starts at the start signal

    def poll_record(self, timeout_s: float):
        records = _flat(self._consumer.poll(timeout_ms=int(timeout_s * 1000), max_records=1))
        return Record.of(records[0]) if records else None

    def poll_batch(self, timeout_s: float, max_records: int) -> Batch:
        if self._early:
            records, self._early = self._early[:max_records], self._early[max_records:]
        else:
            records = _flat(self._consumer.poll(timeout_ms=int(timeout_s * 1000), max_records=max_records))
        if self._held:  # a rebalance may have handed over partitions that are not paused yet
            self._consumer.pause(*self._consumer.assignment())
        return Batch(records)

    def wire_bytes(self) -> int | None:
        return None  # kafka-python keeps byte rates, not totals

    def effective_config(self) -> dict[str, dict[str, Any]]:
        config = {}
        if self._producer is not None:
            config["producer"] = printable(self._producer.config)
        if self._consumer is not None:
            config["consumer"] = printable(self._consumer.config)
        return config

    def close(self) -> None:
        if self._consumer is not None:
            self._consumer.close()
        if self._producer is not None:
            self._producer.close(timeout=5)


def _flat(batches: dict) -> list:
    return list(itertools.chain.from_iterable(batches.values()))


def _keep_answer(append):
    def answered(value: bytes, outcome) -> None:
        append((value, outcome))
    return answered


def _ack_callbacks(acks: AckLog):
    latency, failed, clock = acks.latencies.append, acks.errors.append, monotonic_ns
    size = acks.sizes.append if acks.sizes is not None else None

    def acked(sent_ns: int, metadata) -> None:
        latency(clock() - sent_ns)
        if size is not None:
            size(metadata.serialized_value_size)

    def refused(exc: Exception) -> None:
        failed(f"{type(exc).__name__}: {exc}")

    return acked, refused

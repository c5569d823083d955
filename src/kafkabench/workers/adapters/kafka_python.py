"""kafka-python (pure Python)."""

from __future__ import annotations

import time
from typing import Any

import kafka
from kafka import KafkaConsumer, KafkaProducer, TopicPartition
from kafka.errors import KafkaError, KafkaTimeoutError

from kafkabench.workers.adapters.base import AckCallback, AdapterError, QueueFull, Record, printable


class Adapter:
    name = "kafka-python"

    def __init__(self) -> None:
        self._producer: KafkaProducer | None = None
        self._consumer: KafkaConsumer | None = None
        self._early: list[Record] = []
        self._held = False

    def version(self) -> str:
        # CRC-32C of every record batch is pure Python unless the optional crc32c package is installed:
        # on large values that decides the latency, so the table says which one ran
        from kafka.record import util

        return f"{kafka.__version__} (crc32c: {'pure Python' if util.crc32c_c is None else 'C'})"

    def open_producer(self, bootstrap_servers: str, config: dict[str, Any], wire_stats: bool = False) -> None:
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
        future.add_callback(lambda _metadata: on_ack(None))
        future.add_errback(lambda exc: on_ack(f"{type(exc).__name__}: {exc}"))

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

    def subscribe(self, topic: str, timeout_s: float, at_end: bool = False) -> None:
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
        self._early += self._records(self._consumer.poll(timeout_ms=timeout_ms))

    def hold(self, held: bool) -> None:
        self._held = held
        assignment = self._consumer.assignment()
        if held:
            self._consumer.pause(*assignment)
        else:
            self._consumer.resume(*self._consumer.paused())

    def poll_record(self, timeout_s: float):
        records = self._records(self._consumer.poll(timeout_ms=int(timeout_s * 1000), max_records=1))
        return records[0] if records else None

    def poll_batch(self, timeout_s: float) -> list[Record]:
        early, self._early = self._early, []
        records = early or self._records(self._consumer.poll(timeout_ms=int(timeout_s * 1000)))
        if self._held:  # a rebalance may have handed over partitions that are not paused yet
            self._consumer.pause(*self._consumer.assignment())
        return records

    @staticmethod
    def _records(batches) -> list[Record]:
        return [Record(r.key, r.value, r.headers, (r.topic, r.partition, r.offset))
                for records in batches.values() for r in records]

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

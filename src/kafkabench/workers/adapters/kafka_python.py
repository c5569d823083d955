"""kafka-python (pure Python)."""

from __future__ import annotations

from typing import Any

import kafka
from kafka import KafkaConsumer, KafkaProducer, TopicPartition
from kafka.errors import KafkaError, KafkaTimeoutError

from kafkabench.workers.adapters.base import AckCallback, AdapterError, printable


class Adapter:
    name = "kafka-python"

    def __init__(self) -> None:
        self._producer: KafkaProducer | None = None
        self._consumer: KafkaConsumer | None = None

    def version(self) -> str:
        # CRC-32C of every record batch is pure Python unless the optional crc32c package is installed:
        # on large values that decides the latency, so the table says which one ran
        from kafka.record import util

        return f"{kafka.__version__} (crc32c: {'pure Python' if util.crc32c_c is None else 'C'})"

    def open(self, bootstrap_servers: str, producer_config: dict[str, Any], consumer_config: dict[str, Any]) -> None:
        servers = bootstrap_servers.split(",")
        try:
            self._producer = KafkaProducer(bootstrap_servers=servers, **producer_config)
            self._consumer = KafkaConsumer(bootstrap_servers=servers, **consumer_config)
        except (KafkaError, ValueError, TypeError) as exc:
            raise AdapterError(f"cannot create the kafka-python clients: {exc}") from exc

    def send(self, topic: str, key: bytes, value: bytes, on_ack: AckCallback) -> None:
        try:
            future = self._producer.send(topic, value=value, key=key)
        except KafkaError as exc:
            raise AdapterError(f"send failed: {exc}") from exc
        future.add_callback(lambda _metadata: on_ack(None))
        future.add_errback(lambda exc: on_ack(str(exc) or type(exc).__name__))

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

    def poll_record(self, timeout_s: float):
        try:
            batches = self._consumer.poll(timeout_ms=int(timeout_s * 1000), max_records=1)
        except KafkaError as exc:
            raise AdapterError(f"consume failed: {exc}") from exc
        for records in batches.values():
            for record in records:
                return record.key, record.value
        return None

    def effective_config(self) -> dict[str, dict[str, Any]]:
        return {"producer": printable(self._producer.config), "consumer": printable(self._consumer.config)}

    def close(self) -> None:
        if self._consumer is not None:
            self._consumer.close()
        if self._producer is not None:
            self._producer.close(timeout=5)

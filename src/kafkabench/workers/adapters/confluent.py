"""confluent-kafka (librdkafka)."""

from __future__ import annotations

from typing import Any

import confluent_kafka
from confluent_kafka import Consumer, KafkaException, Producer, TopicPartition

from kafkabench.workers.adapters.base import AckCallback, AdapterError, printable


class Adapter:
    name = "confluent"

    def __init__(self) -> None:
        self._producer: Producer | None = None
        self._consumer: Consumer | None = None
        self._config: dict[str, dict[str, Any]] = {}

    def version(self) -> str:
        return f"{confluent_kafka.__version__} (librdkafka {confluent_kafka.libversion()[0]})"

    def open(self, bootstrap_servers: str, producer_config: dict[str, Any], consumer_config: dict[str, Any]) -> None:
        producer = {"bootstrap.servers": bootstrap_servers, **producer_config}
        consumer = {"bootstrap.servers": bootstrap_servers, "group.id": "kafkabench", **consumer_config}
        self._config = {"producer": printable(producer), "consumer": printable(consumer)}
        try:
            self._producer = Producer(producer)
            self._consumer = Consumer(consumer)
        except KafkaException as exc:
            raise AdapterError(exc.args[0].str()) from exc

    def send(self, topic: str, key: bytes, value: bytes, on_ack: AckCallback) -> None:
        def delivered(err, _msg) -> None:
            on_ack(err.str() if err is not None else None)

        try:
            self._producer.produce(topic, value, key, on_delivery=delivered)
        except (KafkaException, BufferError) as exc:
            raise AdapterError(f"produce failed: {exc}") from exc

    def flush(self, timeout_s: float) -> int:
        return self._producer.flush(timeout_s)

    def assign_at_end(self, topic: str, partition: int, timeout_s: float) -> None:
        try:
            _low, high = self._consumer.get_watermark_offsets(TopicPartition(topic, partition), timeout=timeout_s)
        except KafkaException as exc:
            raise AdapterError(f"cannot read the end offset of {topic}: {exc.args[0].str()}") from exc
        self._consumer.assign([TopicPartition(topic, partition, high)])

    def poll_record(self, timeout_s: float):
        msg = self._consumer.poll(timeout_s)
        if msg is None:
            return None
        if msg.error():
            raise AdapterError(f"consume failed: {msg.error().str()}")
        return msg.key(), msg.value()

    def effective_config(self) -> dict[str, dict[str, Any]]:
        # librdkafka has no call listing its effective settings: these are the ones given, the rest are its defaults
        return self._config

    def close(self) -> None:
        if self._consumer is not None:
            self._consumer.close()
        if self._producer is not None:
            self._producer.flush(5)

"""The smallest proof that a cluster works: create a topic, write one record with acks=all, read it back."""

from __future__ import annotations

import hashlib
import time
import uuid
from dataclasses import dataclass

from confluent_kafka import Consumer, KafkaException, Producer

from kafkabench.admin import KafkaAdmin, quiet_client_config
from kafkabench.connection import Connection
from kafkabench.errors import KafkabenchError


@dataclass(frozen=True)
class RoundTrip:
    topic: str
    size_bytes: int
    create_topic_ms: float
    produce_ms: float  # send call -> ack
    consume_ms: float  # subscribe -> record in hand (includes the consumer's group join)
    partition: int
    offset: int


def round_trip(bootstrap_servers: str | Connection, size_bytes: int = 1024, timeout_s: float = 30) -> RoundTrip:
    topic = f"kafkabench-check-{uuid.uuid4().hex[:12]}"
    value = hashlib.sha256(topic.encode()).digest() * (size_bytes // 32 + 1)
    value = value[:size_bytes]
    with KafkaAdmin(bootstrap_servers, timeout_s=timeout_s) as admin:
        start = time.perf_counter_ns()
        admin.create_topic(topic)
        created = time.perf_counter_ns()
        try:
            partition, offset, acked = _produce(bootstrap_servers, topic, value, timeout_s)
            consumed_ms = _consume(bootstrap_servers, topic, value, timeout_s)
        finally:
            admin.delete_topic(topic)
    return RoundTrip(topic, size_bytes, (created - start) / 1e6, (acked - created) / 1e6, consumed_ms, partition, offset)


def _produce(bootstrap_servers: str | Connection, topic: str, value: bytes, timeout_s: float) -> tuple[int, int, int]:
    producer = Producer(quiet_client_config(bootstrap_servers, acks="all", **{"message.timeout.ms": int(timeout_s * 1000)}))
    outcome: dict = {}

    def delivered(err, msg) -> None:
        outcome.update(err=err, partition=msg.partition(), offset=msg.offset(), at=time.perf_counter_ns())

    producer.produce(topic, value, on_delivery=delivered)
    producer.flush(timeout_s)
    if not outcome:
        raise KafkabenchError(f"no acknowledgement for a write to {topic} within {timeout_s:g} s; is {bootstrap_servers} healthy?")
    if outcome["err"] is not None:
        raise KafkabenchError(f"write to {topic} failed: {outcome['err'].str()}")
    return outcome["partition"], outcome["offset"], outcome["at"]


def _consume(bootstrap_servers: str | Connection, topic: str, expected: bytes, timeout_s: float) -> float:
    consumer = Consumer(quiet_client_config(bootstrap_servers, **{"group.id": topic, "auto.offset.reset": "earliest",
                                                                   "enable.auto.commit": False}))
    try:
        start = time.perf_counter_ns()
        consumer.subscribe([topic])
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            msg = consumer.poll(0.5)
            if msg is None:
                continue
            if msg.error():
                raise KafkaException(msg.error())
            if msg.value() != expected:
                raise KafkabenchError(f"read back from {topic} a different value than was written ({len(msg.value() or b'')} bytes)")
            return (time.perf_counter_ns() - start) / 1e6
        raise KafkabenchError(f"the record written to {topic} was not read back within {timeout_s:g} s")
    except KafkaException as exc:
        raise KafkabenchError(f"reading {topic} failed: {exc.args[0].str()}") from exc
    finally:
        consumer.close()

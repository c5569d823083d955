"""A Kafka client as a ping-pong transport: produce one record, wait for its ack, read it back."""

from __future__ import annotations

import hashlib
from typing import Any

from kafkabench.core.clock import Clock, monotonic_ns
from kafkabench.core.protocol import Task
from kafkabench.workers.adapters.base import Ack, AdapterError, KafkaClient, Record
from kafkabench.workers.ping_pong import Exchange, ExchangeFailed


class KafkaPingPong:
    def __init__(self, client: KafkaClient, task: Task, payload: bytes, clock: Clock = monotonic_ns) -> None:
        self.client = client
        self.task = task
        self.payload = payload
        self.clock = clock

    def version(self) -> str:
        return self.client.version()

    def open(self) -> None:
        try:
            self.client.open_producer(self.task.bootstrap_servers, self.task.producer_config)
            self.client.open_consumer(self.task.bootstrap_servers, self.task.consumer_config)
            self.client.assign_at_end(self.task.topic, 0, self.task.timeout_s)
        except AdapterError as exc:
            raise ExchangeFailed("failure", str(exc)) from exc

    def exchange(self, seq: int) -> Exchange:
        timeout = self.task.timeout_s
        key = str(seq).encode()
        ack: dict[str, Any] = {}

        def on_ack(answer: Ack) -> None:
            ack.update(ns=self.clock(), error=answer.error)

        sent = self.clock()
        try:
            self.client.send(self.task.topic, key, self.payload, on_ack)
            self.client.flush(timeout)
        except AdapterError as exc:
            raise ExchangeFailed("failure", f"message {seq}: {exc}") from exc
        if not ack:
            raise ExchangeFailed("timeout", f"no acknowledgement for message {seq} within {timeout:g} s")
        if ack["error"] is not None:
            raise ExchangeFailed("failure", f"message {seq} was not acknowledged: {ack['error']}")
        record, received = self._next_record(seq, sent + int(timeout * 1e9))
        self._verify(seq, key, record)
        return Exchange(sent, ack["ns"], received)

    def _next_record(self, seq: int, deadline_ns: int) -> tuple[Record, int]:
        while True:
            remaining = (deadline_ns - self.clock()) / 1e9
            if remaining <= 0:
                raise ExchangeFailed("timeout", f"message {seq} was acknowledged but not read back within {self.task.timeout_s:g} s", acked=True)
            try:
                record = self.client.poll_record(min(remaining, 1.0))
            except AdapterError as exc:
                raise ExchangeFailed("failure", f"message {seq}: {exc}", acked=True) from exc
            if record is not None:
                return record, self.clock()

    def _verify(self, seq: int, key: bytes, record: Record) -> None:
        got_key, value = record.key, record.value or b""
        if got_key != key:
            raise ExchangeFailed("integrity", f"expected message {seq} but read key {got_key!r}", acked=True)
        if len(value) != len(self.payload) or hashlib.sha256(value).hexdigest() != self.task.payload_sha256s[0]:
            raise ExchangeFailed("integrity", f"message {seq} read back differs from what was sent "
                                              f"({len(value)} bytes, {len(self.payload)} sent)", acked=True)

    def finish(self) -> None:
        pass

    def effective_config(self) -> dict[str, dict[str, Any]]:
        return self.client.effective_config()

    def close(self) -> None:
        self.client.close()

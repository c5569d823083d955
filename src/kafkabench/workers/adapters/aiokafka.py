"""aiokafka (asyncio), driven from the synchronous loop through a private event loop."""

from __future__ import annotations

import asyncio
import inspect
from typing import Any

import aiokafka
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition
from aiokafka.errors import KafkaError

from kafkabench.workers.adapters.base import AckCallback, AdapterError, printable


class Adapter:
    name = "aiokafka"

    def __init__(self) -> None:
        self._loop = asyncio.new_event_loop()
        self._producer: AIOKafkaProducer | None = None
        self._consumer: AIOKafkaConsumer | None = None
        self._pending: set[asyncio.Future] = set()
        self._config: dict[str, dict[str, Any]] = {}

    def version(self) -> str:
        return aiokafka.__version__

    def open(self, bootstrap_servers: str, producer_config: dict[str, Any], consumer_config: dict[str, Any]) -> None:
        self._config = {"producer": _with_defaults(AIOKafkaProducer, producer_config),
                        "consumer": _with_defaults(AIOKafkaConsumer, consumer_config)}

        async def start() -> None:
            self._producer = AIOKafkaProducer(bootstrap_servers=bootstrap_servers, **producer_config)
            self._consumer = AIOKafkaConsumer(bootstrap_servers=bootstrap_servers, **consumer_config)
            await self._producer.start()
            await self._consumer.start()

        self._run(start(), "cannot start the aiokafka clients")

    def send(self, topic: str, key: bytes, value: bytes, on_ack: AckCallback) -> None:
        future = self._run(self._producer.send(topic, value=value, key=key), "send failed")

        def done(f: asyncio.Future) -> None:
            self._pending.discard(f)
            error = f.exception()
            on_ack(None if error is None else (str(error) or type(error).__name__))

        self._pending.add(future)
        future.add_done_callback(done)  # registered before any waiter, so it runs first

    def flush(self, timeout_s: float) -> int:
        if self._pending:
            self._loop.run_until_complete(asyncio.wait(set(self._pending), timeout=timeout_s))
        return len(self._pending)

    def assign_at_end(self, topic: str, partition: int, timeout_s: float) -> None:
        async def assign() -> None:
            tp = TopicPartition(topic, partition)
            self._consumer.assign([tp])
            end = await asyncio.wait_for(self._consumer.end_offsets([tp]), timeout_s)
            self._consumer.seek(tp, end[tp])

        self._run(assign(), f"cannot read the end offset of {topic}")

    def poll_record(self, timeout_s: float):
        batches = self._run(self._consumer.getmany(timeout_ms=int(timeout_s * 1000), max_records=1), "consume failed")
        for records in batches.values():
            for record in records:
                return record.key, record.value
        return None

    def effective_config(self) -> dict[str, dict[str, Any]]:
        return self._config

    def close(self) -> None:
        for client in (self._consumer, self._producer):
            if client is not None:
                try:
                    self._loop.run_until_complete(asyncio.wait_for(client.stop(), 10))
                except (KafkaError, asyncio.TimeoutError):
                    pass
        self._loop.close()

    def _run(self, awaitable, what: str):
        try:
            return self._loop.run_until_complete(awaitable)
        except (KafkaError, asyncio.TimeoutError, ValueError, TypeError) as exc:
            raise AdapterError(f"{what}: {exc or type(exc).__name__}") from exc


def _with_defaults(cls: type, given: dict[str, Any]) -> dict[str, Any]:
    """aiokafka keeps no config dict: its keyword defaults plus what was given are what it uses."""
    defaults = {name: p.default for name, p in inspect.signature(cls.__init__).parameters.items()
                if p.default is not inspect.Parameter.empty and name != "loop"}
    return printable({**defaults, **given})

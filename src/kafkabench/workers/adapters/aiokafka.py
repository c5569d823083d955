"""aiokafka (asyncio), driven from the synchronous loops through a private event loop.

aiokafka takes TLS settings as one `ssl_context` object, which cannot travel in a JSON task. The config this
adapter is handed says what to build it from instead, under names that are not aiokafka keywords but
kafka-python's for the same things (`security_clients.AIOKAFKA_SSL_KEYS`): `ssl_cafile`, `ssl_cadata` (inline CA
PEM), `ssl_certfile`, `ssl_keyfile`, `ssl_password` (the key's) and `ssl_check_hostname`. `with_ssl_context`
takes them out and builds the context with aiokafka's own `create_ssl_context`.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import itertools
import ssl
import time
from typing import Any

import aiokafka
import numpy as np
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition
from aiokafka.errors import KafkaError
from aiokafka.helpers import create_ssl_context

from kafkabench.config.redact import redact
from kafkabench.config.security_clients import AIOKAFKA_SSL_KEYS
from kafkabench.core.clock import monotonic_ns
from kafkabench.workers.acks import AckLog
from kafkabench.workers.adapters.base import (Ack, AckCallback, AdapterError, Answers, Batch, QueueFull, Record,
                                              SendRefused, printable, stamp_headers)


class Adapter:
    name = "aiokafka"

    def __init__(self) -> None:
        self._loop = asyncio.new_event_loop()
        self._producer: AIOKafkaProducer | None = None
        self._consumer: AIOKafkaConsumer | None = None
        self._pending: set[asyncio.Future] = set()
        self._acked = None
        self._config: dict[str, dict[str, Any]] = {}
        self._held = False
        self._acks: AckLog | None = None
        self._answers: list | None = None

    def version(self) -> str:
        return aiokafka.__version__

    def open_producer(self, bootstrap_servers: str, config: dict[str, Any], wire_stats: bool = False,
                      acks: AckLog | None = None, answers: list | None = None) -> None:
        keywords = _keywords(config)
        self._config["producer"] = with_defaults(AIOKafkaProducer, config, keywords)
        self._acks = acks
        self._answers = answers
        if acks is not None:
            self._acked = _ack_callback(acks)

        async def start() -> None:
            self._producer = AIOKafkaProducer(bootstrap_servers=bootstrap_servers, **keywords)
            await self._producer.start()

        self._run(start(), "cannot start the aiokafka producer")

    def open_consumer(self, bootstrap_servers: str, config: dict[str, Any]) -> None:
        keywords = _keywords(config)
        self._config["consumer"] = with_defaults(AIOKafkaConsumer, config, keywords)

        async def start() -> None:
            self._consumer = AIOKafkaConsumer(bootstrap_servers=bootstrap_servers, **keywords)
            await self._consumer.start()

        self._run(start(), "cannot start the aiokafka consumer")

    def send(self, topic, key, value, on_ack: AckCallback, headers=None) -> None:
        if len(self._pending) >= 100_000:
            raise QueueFull("100000 records in flight")
        future = self._run(self._producer.send(topic, value=value, key=key, headers=headers), "send failed")

        def done(f: asyncio.Future) -> None:
            self._pending.discard(f)
            error = f.exception()
            if error is None:
                metadata = f.result()
                on_ack(Ack(None, metadata.partition, metadata.offset))
            else:
                on_ack(Ack(f"{type(error).__name__}: {error}"))

        self._pending.add(future)
        future.add_done_callback(done)  # registered before any waiter, so it runs first

    def send_many(self, topic, values, stamp=None, partition=None, keys=None) -> int:
        """The whole batch of sends runs inside the event loop: one loop entry per batch, not per record.
        aiokafka bounds what is queued itself: a send waits while its partition's batch is full."""
        return self._loop.run_until_complete(self._send_many(topic, values, stamp, partition, keys))

    async def _send_many(self, topic, values, stamp, partition, keys) -> int:
        send, clock, acked, partial = self._producer.send, monotonic_ns, self._acked, functools.partial
        taken = 0
        for key, value in zip(keys or itertools.repeat(None), values):
            sent = clock()
            try:
                future = await send(topic, value=value, key=key, headers=stamp_headers(stamp()) if stamp else None,
                                    partition=partition)
            except KafkaError as exc:
                self._acks.errors.append(f"SendFailed: {exc}")
            else:
                future.add_done_callback(partial(acked, sent, len(value)))
            taken += 1
        return taken

    def send_tracked(self, topic, values, stamp_ns=None) -> int:
        """One loop entry per batch; each future, once done, is kept with its value and read later in bulk."""
        return self._loop.run_until_complete(self._send_tracked(topic, values, stamp_ns))

    async def _send_tracked(self, topic, values, stamp_ns) -> int:
        send, append, partial, taken = self._producer.send, self._answers.append, functools.partial, 0
        headers = None if stamp_ns is None else stamp_headers(stamp_ns)
        for value in values:
            try:
                future = await send(topic, value=value, headers=headers)
            except KafkaError as exc:
                raise SendRefused(type(exc).__name__, taken) from exc
            future.add_done_callback(partial(_keep_answer, append, value, monotonic_ns()))
            taken += 1
        return taken

    @staticmethod
    def read_answers(entries: list) -> Answers:
        values, partitions, offsets, errors, latencies = [], [], [], [], []
        for value, sent_ns, future, answered_ns in entries:
            error = asyncio.CancelledError() if future.cancelled() else future.exception()
            metadata = future.result() if error is None else None
            values.append(value)
            partitions.append(-1 if metadata is None else metadata.partition)
            offsets.append(-1 if metadata is None else metadata.offset)
            errors.append(None if error is None else type(error).__name__)
            latencies.append((answered_ns - sent_ns) / 1000)
        return Answers(values, partitions, offsets, errors, np.array(latencies, dtype=float))

    def poll(self, timeout_s: float) -> None:
        self._loop.run_until_complete(asyncio.sleep(timeout_s))

    def flush(self, timeout_s: float) -> int:
        """Outstanding sends: those of `send` by count; those of send_many as 1 until aiokafka's own flush ends."""
        if self._pending:
            self._loop.run_until_complete(asyncio.wait(set(self._pending), timeout=timeout_s))
        outstanding = len(self._pending)
        if self._acked is not None or self._answers is not None:
            try:
                self._loop.run_until_complete(asyncio.wait_for(self._producer.flush(), timeout_s))
            except asyncio.TimeoutError:
                outstanding += 1
            self._loop.run_until_complete(asyncio.sleep(0))  # the done callbacks of the last batch run now
        return outstanding

    def assign_at_end(self, topic: str, partition: int, timeout_s: float) -> None:
        async def assign() -> None:
            tp = TopicPartition(topic, partition)
            self._consumer.assign([tp])
            end = await asyncio.wait_for(self._consumer.end_offsets([tp]), timeout_s)
            self._consumer.seek(tp, end[tp])

        self._run(assign(), f"cannot read the end offset of {topic}")

    def subscribe(self, topics: list[str], timeout_s: float, at_end: bool = False,
                  partitions: list[int] | None = None) -> None:
        named = ", ".join(topics)  # for messages

        async def join() -> None:
            if partitions is not None:
                self._consumer.assign([TopicPartition(topics[0], p) for p in partitions])
            else:
                self._consumer.subscribe(topics)
            deadline = time.monotonic() + timeout_s
            while not self._consumer.assignment():
                if time.monotonic() > deadline:
                    raise AdapterError(f"no partitions of {named} assigned within {timeout_s:g} s")
                await asyncio.sleep(0.05)
            if at_end:
                await self._consumer.seek_to_end(*self._consumer.assignment())
            for tp in self._consumer.assignment():
                await self._consumer.position(tp)  # resolves the offset now, before any producer starts

        self._run(join(), f"cannot join the group on {named}")

    def hold(self, held: bool) -> None:
        self._held = held

        async def apply() -> None:  # aiokafka wants even pause() called inside its loop
            if held:
                self._consumer.pause(*self._consumer.assignment())
            else:
                self._consumer.resume(*self._consumer.paused())

        self._run(apply(), "cannot pause or resume fetching")

    def fetching_since_ns(self) -> int | None:
        return None  # held means paused: fetching starts at the start signal

    def poll_record(self, timeout_s: float):
        records = self._batch(timeout_s, max_records=1)
        return Record.of(records[0]) if records else None

    def poll_batch(self, timeout_s: float, max_records: int) -> Batch:
        return Batch(self._batch(timeout_s, max_records))

    def _batch(self, timeout_s: float, max_records: int | None) -> list:
        async def fetch():
            batches = await self._consumer.getmany(timeout_ms=int(timeout_s * 1000), max_records=max_records)
            if self._held:  # a rebalance may have handed over partitions that are not paused yet
                self._consumer.pause(*self._consumer.assignment())
            return batches

        return list(itertools.chain.from_iterable(self._run(fetch(), "consume failed").values()))

    def wire_bytes(self) -> int | None:
        return None  # aiokafka keeps no byte counters

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


def _keep_answer(append, value: bytes, sent_ns: int, future: asyncio.Future) -> None:
    """The future's done callback, on the event loop: the answer kept with its send's time and its own."""
    append((value, sent_ns, future, monotonic_ns()))


def _ack_callback(acks: AckLog):
    latency, failed, clock = acks.latencies.append, acks.errors.append, monotonic_ns
    size = acks.sizes.append if acks.sizes is not None else None

    def acked(sent_ns: int, value_bytes: int, future: asyncio.Future) -> None:
        error = asyncio.CancelledError() if future.cancelled() else future.exception()
        if error is not None:
            failed(f"{type(error).__name__}: {error}")
            return
        latency(clock() - sent_ns)
        if size is not None:
            size(value_bytes)

    return acked


def with_ssl_context(config: dict[str, Any]) -> dict[str, Any]:
    """aiokafka's keywords: `config` without the AIOKAFKA_SSL_KEYS and, when the protocol uses TLS (and no
    context was given), with the SSLContext they describe: no CA given means the system's, as for the other
    clients; host name checking as ssl_check_hostname says, the certificate chain checked either way."""
    keywords = {key: value for key, value in config.items() if key not in AIOKAFKA_SSL_KEYS}
    if keywords.get("security_protocol", "PLAINTEXT") not in ("SSL", "SASL_SSL") or "ssl_context" in keywords:
        return keywords
    context = create_ssl_context(
        cafile=config.get("ssl_cafile"), cadata=config.get("ssl_cadata"),
        certfile=config.get("ssl_certfile"), keyfile=config.get("ssl_keyfile"),
        password=config.get("ssl_password") or "",  # never None: OpenSSL would prompt on the terminal for it
    )
    context.check_hostname = bool(config.get("ssl_check_hostname", True))
    keywords["ssl_context"] = context
    return keywords


def _keywords(config: dict[str, Any]) -> dict[str, Any]:
    try:
        return with_ssl_context(config)
    except (OSError, ValueError) as exc:  # ssl.SSLError is an OSError
        raise AdapterError(f"cannot build aiokafka's SSL context: {exc}") from exc


def with_defaults(cls: type, given: dict[str, Any], keywords: dict[str, Any]) -> dict[str, Any]:
    """aiokafka keeps no config dict: its keyword defaults plus what was given are what it uses; the SSL
    context shown by what it checks, the settings it was built from kept; secrets redacted."""
    defaults = {name: p.default for name, p in inspect.signature(cls.__init__).parameters.items()
                if p.default is not inspect.Parameter.empty and name != "loop"}
    effective = {**defaults, **given, **keywords}
    context = effective.get("ssl_context")
    if isinstance(context, ssl.SSLContext):
        effective["ssl_context"] = f"SSLContext(check_hostname={context.check_hostname}, verify_mode={context.verify_mode.name})"
    return printable(redact(effective))

"""confluent-kafka (librdkafka)."""

from __future__ import annotations

import functools
import json
import time
from typing import Any

import confluent_kafka
import numpy as np
from confluent_kafka import Consumer, KafkaError, KafkaException, Message, Producer, TopicPartition

from kafkabench.workers.acks import AckLog, seconds_to_us
from kafkabench.workers.adapters.base import (Ack, AckCallback, AdapterError, Answers, Batch, QueueFull, Record,
                                              SendRefused, TransactionFailed, printable, stamp_headers)

STATS_INTERVAL_MS = 500  # librdkafka reports tx_bytes (wire bytes) only in its statistics


class Adapter:
    name = "confluent"

    def __init__(self) -> None:
        self._producer: Producer | None = None
        self._consumer: Consumer | None = None
        self._config: dict[str, dict[str, Any]] = {}
        self._stats: str | None = None  # the latest statistics report, as librdkafka wrote it
        self._pending: list[Message] = []
        self._held = False
        self._assigned_ns: int | None = None
        self._failed: list[str] = []  # what a rebalance callback could not do, raised by the next poll
        self._acks: AckLog | None = None

    def version(self) -> str:
        return f"{confluent_kafka.__version__} (librdkafka {confluent_kafka.libversion()[0]})"

    def open_producer(self, bootstrap_servers: str, config: dict[str, Any], wire_stats: bool = False,
                      acks: AckLog | None = None, answers: list | None = None) -> None:
        settings = {"bootstrap.servers": bootstrap_servers, **config}
        self._config["producer"] = printable(settings)
        if answers is not None:
            settings["on_delivery"] = _keep_report(answers.append)
        if acks is not None:
            acks.to_us = seconds_to_us
            settings["on_delivery"] = _delivery_report(acks)
            self._acks = acks
        if wire_stats:  # librdkafka builds a report every interval: only where wire bytes count
            settings.setdefault("statistics.interval.ms", STATS_INTERVAL_MS)
            settings["stats_cb"] = self._on_stats
        self._producer = self._create(Producer, settings)

    def open_consumer(self, bootstrap_servers: str, config: dict[str, Any]) -> None:
        settings = {"bootstrap.servers": bootstrap_servers, "group.id": "kafkabench", **config}
        self._config["consumer"] = printable(settings)
        self._consumer = self._create(Consumer, settings)

    @staticmethod
    def _create(kind, settings):
        try:
            return kind(settings)
        except KafkaException as exc:
            raise AdapterError(exc.args[0].str()) from exc

    def send(self, topic, key, value, on_ack: AckCallback, headers=None) -> None:
        def delivered(err, msg) -> None:
            on_ack(Ack(None, msg.partition(), msg.offset()) if err is None else Ack(f"{err.name()}: {err.str()}"))

        try:
            self._producer.produce(topic, value, key, headers=headers, on_delivery=delivered)
        except BufferError as exc:
            raise QueueFull(str(exc)) from exc
        except KafkaException as exc:
            raise AdapterError(f"produce failed: {exc.args[0].str()}") from exc

    def send_many(self, topic, values, stamp=None, partition=None, keys=None) -> int:
        produce, taken = self._producer.produce, 0
        if partition is not None:
            produce = functools.partial(produce, partition=partition)
        try:
            if keys is not None:  # a loop of its own: the bare ones below stay the minimal loop's
                for key, value in zip(keys, values):
                    if stamp is None:
                        produce(topic, value, key=key)
                    else:
                        produce(topic, value, key=key, headers=stamp_headers(stamp()))
                    taken += 1
            elif stamp is None:
                for value in values:
                    produce(topic, value)
                    taken += 1
            else:
                for value in values:
                    produce(topic, value, headers=stamp_headers(stamp()))
                    taken += 1
        except BufferError:
            return taken
        except KafkaException as exc:
            error = exc.args[0]
            self._acks.errors.append(f"{error.name()}: {error.str()}")
            return taken + 1
        return taken

    def send_tracked(self, topic, values, stamp_ns=None) -> int:
        produce, taken = self._producer.produce, 0
        if stamp_ns is not None:  # the bare call otherwise: the hot path stays the minimal loop's
            produce = functools.partial(produce, headers=stamp_headers(stamp_ns))
        try:
            for value in values:
                produce(topic, value)
                taken += 1
        except BufferError:
            return taken
        except KafkaException as exc:
            raise SendRefused(exc.args[0].name(), taken) from exc
        return taken

    @staticmethod
    def read_answers(entries: list[Message]) -> Answers:
        """Delivery reports (Messages), read through librdkafka's own accessors with C-level `map`; the latency is
        librdkafka's, from the produce() call to the delivery report."""
        errors = list(map(Message.error, entries))
        if errors.count(None) != len(errors):
            errors = [None if error is None else error.name() for error in errors]
        offsets = list(map(Message.offset, entries))
        if None in offsets:  # acks=0: the broker never says where a record went
            offsets = [-1 if offset is None else offset for offset in offsets]
        latencies = np.array(list(map(Message.latency, entries)), dtype=float) * 1e6  # librdkafka's own: produce()
        return Answers(list(map(Message.value, entries)), list(map(Message.partition, entries)), offsets, errors,
                       latencies)  # to the delivery report, None (NaN here) when it has none

    def init_transactions(self, timeout_s: float) -> None:
        try:
            self._producer.init_transactions(timeout_s)
        except KafkaException as exc:
            raise AdapterError(exc.args[0].str()) from exc

    def begin_transaction(self) -> None:
        try:
            self._producer.begin_transaction()
        except KafkaException as exc:
            error = exc.args[0]
            raise TransactionFailed(error.name(), error.str(), error.txn_requires_abort(), error.fatal()) from exc

    def commit_transaction(self, timeout_s: float) -> None:
        self._end_transaction(self._producer.commit_transaction, timeout_s)

    def abort_transaction(self, timeout_s: float) -> None:
        self._end_transaction(self._producer.abort_transaction, timeout_s)

    @staticmethod
    def _end_transaction(end, timeout_s: float) -> None:
        """A retriable error is tried again (librdkafka: the call may be repeated) until `timeout_s` is spent."""
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                end(max(0.1, deadline - time.monotonic()))
                return
            except KafkaException as exc:
                error = exc.args[0]
                if error.retriable() and time.monotonic() < deadline:
                    continue
                raise TransactionFailed(error.name(), error.str(), error.txn_requires_abort(), error.fatal()) from exc

    def poll(self, timeout_s: float) -> None:
        self._producer.poll(timeout_s)

    def flush(self, timeout_s: float) -> int:
        return self._producer.flush(timeout_s)

    def assign_at_end(self, topic: str, partition: int, timeout_s: float) -> None:
        try:
            _low, high = self._consumer.get_watermark_offsets(TopicPartition(topic, partition), timeout=timeout_s)
        except KafkaException as exc:
            raise AdapterError(f"cannot read the end offset of {topic}: {exc.args[0].str()}") from exc
        self._consumer.assign([TopicPartition(topic, partition, high)])

    def subscribe(self, topics: list[str], timeout_s: float, at_end: bool = False,
                  partitions: list[int] | None = None) -> None:
        named = ", ".join(topics)  # for messages
        if partitions is not None:
            try:  # pinned as `latest` is below; OFFSET_STORED: the group's offset, else auto.offset.reset
                offsets = [self._consumer.get_watermark_offsets(TopicPartition(topics[0], p), timeout=timeout_s)[1]
                           if at_end else confluent_kafka.OFFSET_STORED for p in partitions]
            except KafkaException as exc:
                raise AdapterError(f"cannot read the end offsets of {named}: {exc.args[0].str()}") from exc
            self._consumer.assign([TopicPartition(topics[0], p, offset) for p, offset in zip(partitions, offsets)])
            self._assigned_ns = time.monotonic_ns()
            return
        assigned: list = []
        deadline = time.monotonic() + timeout_s
        # `latest` is where the run starts: every partition's end now, before the producers do. librdkafka resolves
        # `latest` lazily, after fetching starts, and a later rebalance (a member joining after this one was ready,
        # one leaving mid-run) assigns partitions again: pinned to their end then, a partition would skip what was
        # written since the start (a CI run's 3 consumers read 11,987 of 12,000). So each assignment starts a
        # partition where the group committed it, else where the run started.
        starts = _end_offsets(self._consumer, topics, deadline) if at_end else {}

        def on_assign(consumer, partitions) -> None:
            until = deadline if not assigned else time.monotonic() + timeout_s  # a rebalance mid-run: time of its own
            try:
                if at_end:
                    committed = _committed_offsets(consumer, partitions, until)
                    for partition in partitions:
                        key = (partition.topic, partition.partition)
                        start = starts.get(key)
                        if start is None:  # a partition added since: nothing was asked to wait for it
                            start = starts[key] = _end_offset(consumer, partition, until)
                        partition.offset = max(start, committed.get(key, -1))
            except AdapterError as exc:
                self._failed.append(str(exc))  # raised by the next poll, not in librdkafka's callback
                return
            consumer.assign(partitions)
            assigned.extend(partitions)
            self._assigned_ns = time.monotonic_ns()  # librdkafka starts fetching them now

        self._consumer.subscribe(topics, on_assign=on_assign)
        while not assigned:
            self._raise_failed()
            if time.monotonic() > deadline:
                raise AdapterError(f"no partitions of {named} assigned within {timeout_s:g} s")
            self._pending.extend(_checked(self._consumer.consume(100, 0.1)))

    def hold(self, held: bool) -> None:
        # no pause(): librdkafka waits about a second before fetching a resumed partition again. Held, a
        # poll takes one message at a time instead, while librdkafka prefetches within its own queue limits.
        self._held = held

    def fetching_since_ns(self) -> int | None:
        return self._assigned_ns

    def _raise_failed(self) -> None:
        if self._failed:
            raise AdapterError(self._failed[0])

    def poll_record(self, timeout_s: float):
        msg = self._consumer.poll(timeout_s)
        self._raise_failed()
        if msg is None:
            return None
        [msg] = _checked([msg])
        return Record(msg.key(), msg.value(), msg.headers(), (msg.topic(), msg.partition(), msg.offset()))

    def poll_batch(self, timeout_s: float, max_records: int) -> Batch:
        limit = 1 if self._held else max_records
        if self._pending:
            messages, self._pending = self._pending[:limit], self._pending[limit:]
            return MessageBatch(messages)
        # consume(n, t) waits for n messages or t: take what is queued now, else wait for the first to arrive
        consume = self._consumer.consume
        batch = MessageBatch(_checked(consume(limit, 0) or consume(1, timeout_s)))
        self._raise_failed()
        return batch

    def _on_stats(self, stats_json: str) -> None:
        self._stats = stats_json  # parsed once, when read: a report names every topic and partition (1 MB at 1,000)

    def wire_bytes(self) -> int | None:
        """tx_bytes of a statistics report emitted after everything was flushed."""
        if self._config.get("producer") is None or self._producer is None:
            return None
        self._stats = None
        deadline = time.monotonic() + 3 * STATS_INTERVAL_MS / 1000
        while self._stats is None and time.monotonic() < deadline:
            self._producer.poll(0.05)
        return int(json.loads(self._stats)["tx_bytes"]) if self._stats else None

    def effective_config(self) -> dict[str, dict[str, Any]]:
        # librdkafka has no call listing its effective settings: these are the ones given, the rest are its defaults
        return self._config

    def close(self) -> None:
        if self._consumer is not None:
            self._consumer.close()
        if self._producer is not None:
            self._producer.flush(5)


class MessageBatch(Batch):
    value = staticmethod(Message.value)
    headers = staticmethod(Message.headers)

    @staticmethod
    def position(msg: Message) -> tuple[str, int, int]:
        return msg.topic(), msg.partition(), msg.offset()

    @staticmethod
    def timestamp(msg: Message) -> int:
        return msg.timestamp()[1]

    def payload_bytes(self) -> int:
        return sum(map(len, self.records))  # a Message's length is its value's


NOT_READY_YET = (KafkaError.NOT_LEADER_FOR_PARTITION, KafkaError.LEADER_NOT_AVAILABLE, KafkaError.UNKNOWN_TOPIC_OR_PART)


def _end_offset(consumer: Consumer, partition: TopicPartition, deadline: float) -> int:
    """The partition's end offset, asked again while its leader is not ready yet (a topic just created: the metadata
    names a leader a moment before it serves the partition), until `deadline`."""
    while True:
        try:
            return consumer.get_watermark_offsets(partition, timeout=max(0.1, deadline - time.monotonic()))[1]
        except KafkaException as exc:
            error = exc.args[0]
            if not (error.retriable() or error.code() in NOT_READY_YET) or time.monotonic() > deadline:
                raise AdapterError(f"cannot read the end offset of {partition.topic} [{partition.partition}]: "
                                   f"{error.str()}") from exc
            time.sleep(0.05)


def _end_offsets(consumer: Consumer, topics: list[str], deadline: float) -> dict[tuple[str, int], int]:
    """Every partition of `topics` and its end offset."""
    try:
        found = consumer.list_topics(timeout=max(0.1, deadline - time.monotonic())).topics
    except KafkaException as exc:
        raise AdapterError(f"cannot read the partitions of {', '.join(topics)}: {exc.args[0].str()}") from exc
    return {(topic, partition): _end_offset(consumer, TopicPartition(topic, partition), deadline)
            for topic in topics if topic in found for partition in found[topic].partitions}


def _committed_offsets(consumer: Consumer, partitions: list[TopicPartition],
                       deadline: float) -> dict[tuple[str, int], int]:
    """The group's committed offset of each of `partitions` that has one."""
    try:
        committed = consumer.committed([TopicPartition(p.topic, p.partition) for p in partitions],
                                       timeout=max(0.1, deadline - time.monotonic()))
    except KafkaException as exc:
        raise AdapterError(f"cannot read the group's committed offsets: {exc.args[0].str()}") from exc
    return {(p.topic, p.partition): p.offset for p in committed if p.offset >= 0}


def _checked(messages: list[Message]) -> list[Message]:
    if any(map(Message.error, messages)):
        error = next(msg.error() for msg in messages if msg.error())
        raise AdapterError(f"consume failed: {error.str()}")
    return messages


def _keep_report(append):
    """The producer's one delivery callback for tracked sends: the report itself is kept, read later in bulk."""
    def delivered(err, msg) -> None:
        append(msg)
    return delivered


def _delivery_report(acks: AckLog):
    """The producer's one delivery callback: librdkafka's own produce() -> delivery report latency (us), read
    from the report instead of a clock per send, so sends carry no per-record callback or closure."""
    latency, failed = acks.latencies.append, acks.errors.append

    if acks.sizes is None:
        def delivered(err, msg) -> None:
            if err is None:
                latency(msg.latency())
            else:
                failed(f"{err.name()}: {err.str()}")
        return delivered

    size = acks.sizes.append

    def delivered_sized(err, msg) -> None:
        if err is None:
            latency(msg.latency())
            size(len(msg))
        else:
            failed(f"{err.name()}: {err.str()}")
    return delivered_sized

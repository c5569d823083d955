"""What is in the topic after a delivery run, read by a fresh read_committed consumer: every partition from
the earliest offset to the end offset it had when the read began, as `ReadChunk`s for the checker (ids
decoded in bulk, values that are not delivery ids counted as foreign). `read_spans` is the second fresh
read that confirms a loss: only the partitions and offsets the misses need.

Every wait is bounded: a read that makes no progress for `stall_s` fails naming the partitions it could
not finish and how far it got. `decode` reads ids out of a batch of records (`of_values(ids.decode)`, or another
producer's format, such as Apache's VerifiableProducer's numbers, or an application's ids, wherever its records
hold them)."""

from __future__ import annotations

import contextlib
import time
import uuid
from collections.abc import Callable, Iterator

import numpy as np
from confluent_kafka import Consumer, KafkaException, TopicPartition

from kafkabench.admin import quiet_client_config
from kafkabench.connection import Connection
from kafkabench.errors import KafkabenchError
from kafkabench.core import delivery_ids as ids
from kafkabench.labs.delivery.checker import ReadChunk

BATCH = 10_000
STALL_S = 30.0
Decode = Callable[[list], tuple[np.ndarray, np.ndarray, np.ndarray]]  # records -> producer, sequence, which are ids


def of_values(decode: Callable[[list], tuple[np.ndarray, np.ndarray, np.ndarray]]) -> Decode:
    """A decode of the records' values only, such as `ids.decode`."""
    return lambda records: decode([record.value() for record in records])


DELIVERY_IDS = of_values(ids.decode)


class ReadBackFailed(KafkabenchError):
    """The topic could not be read to its end within the bound."""


def read_topic(bootstrap: str | Connection, topic: str, stall_s: float = STALL_S, decode: Decode = DELIVERY_IDS,
               isolation: str = "read_committed") -> Iterator[ReadChunk]:
    """Every partition, earliest to the end offset it has now (`isolation` read_uncommitted: records of open and
    aborted transactions too)."""
    with _consumer(bootstrap, isolation) as consumer:
        yield from _read(consumer, topic, _whole(consumer, topic, stall_s), stall_s, decode)


def read_spans(bootstrap: str | Connection, topic: str, spans: list[tuple[int, int, int | None]],
               stall_s: float = STALL_S, decode: Decode = DELIVERY_IDS) -> Iterator[ReadChunk]:
    """(partition, first offset, last offset or None: to the end) each, as `Missing.spans()` gives them."""
    with _consumer(bootstrap) as consumer:
        wanted = []
        for partition, first, last in spans:
            low, high = _bounds(consumer, topic, partition, stall_s)
            end = high if last is None else min(high, last + 1)
            if end > max(first, low):
                wanted.append((partition, max(first, low), end))
        yield from _read(consumer, topic, wanted, stall_s, decode)


@contextlib.contextmanager
def _consumer(bootstrap: str | Connection, isolation: str = "read_committed") -> Iterator[Consumer]:
    consumer = Consumer(quiet_client_config(bootstrap, **{
        "group.id": f"kafkabench-delivery-read-{uuid.uuid4().hex[:8]}", "enable.auto.commit": False,
        "isolation.level": isolation, "enable.partition.eof": False}))
    try:
        yield consumer
    finally:
        consumer.close()


def _partitions(consumer: Consumer, topic: str, timeout_s: float) -> list[int]:
    try:
        metadata = consumer.list_topics(topic, timeout=timeout_s)
    except KafkaException as exc:
        raise ReadBackFailed(f"no metadata for topic {topic} within {timeout_s:g} s: {exc.args[0].str()}") from exc
    found = metadata.topics.get(topic)
    if found is None or found.error is not None or not found.partitions:
        raise ReadBackFailed(f"topic {topic} cannot be read: {found.error.str() if found and found.error else 'no partitions'}")
    return sorted(found.partitions)


def _whole(consumer: Consumer, topic: str, stall_s: float) -> list[tuple[int, int, int]]:
    """Every partition that holds records, earliest to the end offset it has now: (partition, from, to)."""
    spans = [(p, *_bounds(consumer, topic, p, stall_s)) for p in _partitions(consumer, topic, stall_s)]
    return [(p, low, high) for p, low, high in spans if high > low]


def _bounds(consumer: Consumer, topic: str, partition: int, timeout_s: float) -> tuple[int, int]:
    try:
        return consumer.get_watermark_offsets(TopicPartition(topic, partition), timeout=timeout_s)
    except KafkaException as exc:
        raise ReadBackFailed(f"{topic}[{partition}]: no offsets within {timeout_s:g} s ({exc.args[0].name()}); "
                             "is its leader up?") from exc


def copies_of(bootstrap: str | Connection, topic: str, producer: int, sequences: list[int],
              stall_s: float = STALL_S) -> dict[int, list[tuple[int, int, int]]]:
    """Every copy of these ids of `producer` in the topic (read_committed): sequence -> [(partition, offset, its
    timestamp in ms since the epoch)], in read order. The evidence behind a duplicate: where and when each copy was
    written."""
    found: dict[int, list[tuple[int, int, int]]] = {sequence: [] for sequence in sequences}
    with _consumer(bootstrap) as consumer:
        for records in _batches(consumer, topic, _whole(consumer, topic, stall_s), stall_s):
            producers, numbers, ours = ids.decode([m.value() for m in records])
            for message, who, number, valid in zip(records, producers, numbers, ours):
                if valid and who == producer and int(number) in found:
                    found[int(number)].append((message.partition(), message.offset(), message.timestamp()[1]))
    return found


def _read(consumer: Consumer, topic: str, spans: list[tuple[int, int, int]], stall_s: float,
          decode: Decode) -> Iterator[ReadChunk]:
    """Each (partition, from, to) read from `from` until its position reaches `to`."""
    for records in _batches(consumer, topic, spans, stall_s):
        yield _chunk(records, decode)


def _batches(consumer: Consumer, topic: str, spans: list[tuple[int, int, int]], stall_s: float) -> Iterator[list]:
    """Each (partition, from, to) read from `from` until its position reaches `to`: the messages, as read."""
    if not spans:
        return
    ends = {partition: end for partition, _, end in spans}
    at = {partition: start for partition, start, _ in spans}
    consumer.assign([TopicPartition(topic, partition, start) for partition, start, _ in spans])
    last_progress = time.monotonic()
    while ends:
        messages = consumer.consume(BATCH, timeout=0.5)
        records = [m for m in messages if m.error() is None and m.offset() < ends.get(m.partition(), -1)]
        for message in messages:
            if message.error() is not None and message.error().fatal():
                raise ReadBackFailed(f"reading {topic}: {message.error().str()}")
        if records:
            last_progress = time.monotonic()
            yield records
            for message in records:
                at[message.partition()] = message.offset() + 1
        # a transaction's control records take offsets at which no message is read: the position passes them
        for position in consumer.position([TopicPartition(topic, p) for p in ends]):
            if position.offset > at[position.partition]:
                at[position.partition] = position.offset
                last_progress = time.monotonic()
        for partition in [p for p, end in ends.items() if at[p] >= end]:
            del ends[partition]  # what the consumer still fetches of it is left out above
        if ends and time.monotonic() - last_progress > stall_s:
            left = ", ".join(f"[{p}] at {at[p]} of {end}" for p, end in sorted(ends.items()))
            raise ReadBackFailed(f"reading {topic} stalled for {stall_s:g} s with partitions {left} unfinished")


def _chunk(records: list, decode: Decode) -> ReadChunk:
    producer, sequence, ours = decode(records)
    partition = np.fromiter((m.partition() for m in records), np.int32, len(records))
    offset = np.fromiter((m.offset() for m in records), np.int64, len(records))
    return ReadChunk(producer[ours], sequence[ours], partition[ours], offset[ours], foreign=int(np.count_nonzero(~ours)))

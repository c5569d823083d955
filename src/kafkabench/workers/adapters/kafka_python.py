"""kafka-python (pure Python)."""

from __future__ import annotations

import itertools
import time
from typing import Any

import kafka
import numpy as np
from kafka import KafkaConsumer, KafkaProducer, TopicPartition
from kafka.errors import KafkaError, KafkaTimeoutError
from kafka.structs import MemberState

from kafkabench.core.clock import monotonic_ns
from kafkabench.workers.acks import AckLog
from kafkabench.workers.adapters.base import (Ack, AckCallback, AdapterError, Answers, Batch, QueueFull, Record,
                                              SendRefused, printable, stamp_headers)


class Adapter:
    name = "kafka-python"

    def __init__(self) -> None:
        self._producer: KafkaProducer | None = None
        self._consumer: KafkaConsumer | None = None
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

    def send_many(self, topic, values, stamp=None, partition=None, keys=None) -> int:
        """Futures complete on kafka-python's I/O thread: the callbacks only append to the AckLog."""
        send, clock, failed = self._producer.send, monotonic_ns, self._acks.errors.append
        acked, refused = self._callbacks
        taken = 0
        for key, value in zip(keys or itertools.repeat(None), values):
            sent = clock()
            try:
                future = send(topic, value=value, key=key, headers=stamp_headers(stamp()) if stamp else None,
                              partition=partition)
            except KafkaTimeoutError:  # buffer_memory full for max_block_ms
                return taken
            except KafkaError as exc:
                failed(f"SendFailed: {exc}")
            else:
                future.add_callback(acked, sent)
                future.add_errback(refused)
            taken += 1
        return taken

    def send_tracked(self, topic, values, stamp_ns=None) -> int:
        """A future's callback and errback both keep (value, its metadata or exception), on the I/O thread."""
        send, answered, taken = self._producer.send, self._answered, 0
        headers = None if stamp_ns is None else stamp_headers(stamp_ns)
        for value in values:
            try:
                future = send(topic, value=value, headers=headers)
            except KafkaTimeoutError:  # buffer_memory full for max_block_ms
                return taken
            except KafkaError as exc:
                raise SendRefused(type(exc).__name__, taken) from exc
            future.add_both(answered, value, monotonic_ns())
            taken += 1
        return taken

    @staticmethod
    def read_answers(entries: list) -> Answers:
        values, partitions, offsets, errors, latencies = [], [], [], [], []
        for value, sent_ns, outcome, answered_ns in entries:
            failed = isinstance(outcome, BaseException)
            values.append(value)
            partitions.append(-1 if failed else outcome.partition)
            offsets.append(-1 if failed else outcome.offset)
            errors.append(type(outcome).__name__ if failed else None)
            latencies.append((answered_ns - sent_ns) / 1000)
        return Answers(values, partitions, offsets, errors, np.array(latencies, dtype=float))

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

    def subscribe(self, topics: list[str], timeout_s: float, at_end: bool = False,
                  partitions: list[int] | None = None) -> None:
        named = ", ".join(topics)  # for messages
        if partitions is not None:
            self._consumer.assign([TopicPartition(topics[0], p) for p in partitions])
        else:
            self._consumer.subscribe(topics)
            self._join_group(named, timeout_s)
        assignment = self._consumer.assignment()
        if at_end:
            self._consumer.seek_to_end(*assignment)
        deadline = time.monotonic() + timeout_s
        for tp in assignment:  # resolves the offset now, before any producer starts
            try:
                position = self._consumer.position(tp, timeout_ms=_ms_left(deadline))
            except KafkaError as exc:
                raise AdapterError(f"cannot resolve the position of {tp.topic} [{tp.partition}]: {exc}") from exc
            if position is None:
                raise AdapterError(f"the position of {tp.topic} [{tp.partition}] not resolved within {timeout_s:g} s")

    def _join_group(self, topic: str, timeout_s: float) -> None:
        """Join the group and wait for partitions, every JoinGroup -> SyncGroup round awaited to its end.

        Not through poll(timeout_ms=100): kafka-python 3.0 stops waiting when the poll's timer expires and leaves
        the round running on its I/O thread for the next poll. A round that ends between two polls is thrown away
        (a new JoinGroup: another rebalance) or, when it was the leader's rejoin for new metadata (the usual second
        round: the first assigned before the topic's metadata arrived), lost for good: the leader's assignment
        already marked the metadata as handled, so no poll rejoins, the assignment stays empty, no heartbeat goes
        out and the broker drops the member after the session timeout (docs/design.md, The workers)."""
        coordinator = self._consumer._coordinator
        deadline = time.monotonic() + timeout_s
        generation = coordinator._generation.generation_id
        lost: list[str] = []  # why the coordinator was dropped (NotCoordinatorError while it loads the partition)
        coordinator.coordinator_dead = _noting(coordinator.coordinator_dead, lost)
        try:
            while not self._consumer.assignment():
                if time.monotonic() >= deadline:
                    raise AdapterError(f"no partitions of {topic} assigned within {timeout_s:g} s: "
                                       f"{_group_phase(coordinator, generation, lost)}")
                if coordinator.group_id is not None and coordinator.need_rejoin():
                    generation = coordinator._generation.generation_id
                    try:  # returns once joined and synced, or at the deadline
                        coordinator.ensure_active_group(timeout_ms=_ms_left(deadline))
                    except KafkaError as exc:
                        raise AdapterError(f"cannot join the group on {topic}: {type(exc).__name__}: {exc}") from exc
                else:  # joined with no partitions: the topic's metadata, fetched by the I/O thread, asks for a rejoin
                    time.sleep(min(0.05, max(deadline - time.monotonic(), 0)))
        finally:
            del coordinator.coordinator_dead  # the class's own again

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


def _ms_left(deadline: float) -> int:
    return max(int((deadline - time.monotonic()) * 1000), 0)


def _noting(coordinator_dead, lost: list[str]):
    def noted(error) -> None:
        lost.append(type(error).__name__ if isinstance(error, BaseException) else str(error))
        coordinator_dead(error)
    return noted


def _group_phase(coordinator, generation_before: int, lost: list[str]) -> str:
    """Where a join stands: which of the group's requests went unanswered (kafka-python's coordinator state)."""
    if coordinator.group_id is None:
        return "no group.id: waiting for the topic's metadata"
    generation = coordinator._generation
    if coordinator.coordinator_unknown():
        phase = "coordinator unknown (FindCoordinator unanswered or answered COORDINATOR_NOT_AVAILABLE)"
    elif coordinator.state == MemberState.REBALANCING:
        if generation.generation_id != generation_before and generation.generation_id >= 0:
            phase = f"syncing (JoinGroup answered: generation {generation.generation_id}; SyncGroup unanswered)"
        else:
            phase = "joining (coordinator known; JoinGroup unanswered)"
    elif coordinator.state == MemberState.UNJOINED:
        phase = "joining (coordinator known; no JoinGroup sent yet)"
    else:
        phase = f"joined (generation {generation.generation_id}) with no partition of the topic assigned"
    if lost:  # the first group on a fresh cluster: the broker creates and loads __consumer_offsets meanwhile
        phase += f"; the coordinator was dropped {len(lost)} time(s), last for {lost[-1]}"
    return phase


def _flat(batches: dict) -> list:
    return list(itertools.chain.from_iterable(batches.values()))


def _keep_answer(append):
    """The future's callback, on kafka-python's I/O thread: the answer kept with its send's time and its own."""
    def answered(value: bytes, sent_ns: int, outcome) -> None:
        append((value, sent_ns, outcome, monotonic_ns()))
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

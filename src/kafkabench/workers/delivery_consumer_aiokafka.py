"""The delivery lab's consumers and copiers (params: core.protocol.DeliveryConsumerParams) with aiokafka: the twin of
delivery_consumer.ConsumerRun (confluent-kafka), with the same modes, counters, progress, outcome and history.

The worker is synchronous (run(stop) with a threading.Event); aiokafka is asyncio. The run owns one event loop,
running in a thread of its own from open() to close(): each of open, run and close is one coroutine submitted to
it, and the whole run is one coroutine that checks `stop` between polls. A loop that runs all along keeps aiokafka's
heartbeats and group joins going while the worker waits for `start` (a loop driven only by run_until_complete
would stop between steps, as librdkafka's threads do not). Processing's pause is `await asyncio.sleep`. The
report callback is called on the loop's thread.

Written against aiokafka 0.14.x, whose transactional producer is AIOKafkaProducer(transactional_id=...):
start() gets the producer id (its init_transactions), then begin_transaction, send_offsets_to_transaction(offsets,
group_id), commit_transaction and abort_transaction. Where it differs from confluent-kafka:

- No fencing of zombie copiers (no KIP-447): send_offsets_to_transaction takes only the group id, and aiokafka's
  TxnOffsetCommit carries no generation or member id. A copier that lost its partitions in a rebalance and has not
  noticed yet still commits its transaction, output and offsets both, while the new owner copies the same records
  again: duplicates in the output, which the delivery lab's checker shows under faults. Not worked around here
  (the pre-KIP-447 remedy is one transactional id per input partition). Nor does aiokafka's OffsetFetch (v3 at
  most) ask for stable offsets: a member taking over partitions may read the offsets from before a transaction
  still being committed by their previous owner, and copy its records again.
- A failed send does not make aiokafka's transaction abortable: its commit would go through without the record
  (seen with 0.14.0: every copy refused by the broker, 50 transactions committed, offsets at the end, the output
  empty). Each copy's answer is therefore awaited before commit_transaction; a failed one aborts the transaction.
- Timeouts: none of aiokafka's transactional calls takes one (it retries coordinator errors on its own); each is
  bounded here by the task's timeout_s, and one not done by then ends the run (RunFailed "failure"), as a
  confluent commit still timing out at its deadline does.
- Abortable or fatal: aiokafka has no txn_requires_abort(). A fenced or unauthorized producer (by the exception's
  type) ends the run; any other error is answered with abort_transaction, which aiokafka cannot do once its
  sender has failed (an AssertionError on its state, or no answer): that ends the run too.
- No epoch bump (KIP-360): after a batch of a transaction has failed (e.g. MessageSizeTooLarge), aiokafka's
  sequence numbers for that partition stay ahead of the broker's. Its transactions are aborted while the cause
  lasts; the first one after it is gone fails with OutOfOrderSequenceNumber, which ends the run (a new process
  gets a new producer). confluent bumps its epoch on the abort and goes on in the same process.
- Rewind after an abort: consumer.committed(tp) per assigned partition (an OffsetFetch each), then seek, or
  seek_to_beginning where the group has no offset yet (confluent: OFFSET_BEGINNING).
- Rebalances: counted in ConsumerRebalanceListener.on_partitions_assigned (aiokafka's eager assignors, once per
  rebalance, an empty assignment too, as confluent's on_assign).
- Poll errors: aiokafka raises from getmany() where confluent hands out error messages: a retriable one is
  skipped, any other ends the run. Commit errors (CommitFailedError after a rebalance, a partition no longer
  assigned, a timeout, ...) are all counted commit failures: aiokafka has no fatal consumer error.
"""

from __future__ import annotations

import asyncio
import itertools
import threading
import time
from collections.abc import Callable
from pathlib import Path

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, ConsumerRebalanceListener, TopicPartition
from aiokafka.errors import (KafkaError, OutOfOrderSequenceNumber, ProducerFenced, TransactionalIdAuthorizationFailed,
                             UnsupportedVersionError)

from kafkabench.core import delivery_ids as ids
from kafkabench.core.delivery_processed import COMMITS, Processed
from kafkabench.core.protocol import DeliveryConsumerParams, Outcome, Progress, Task
from kafkabench.workers.adapters.aiokafka import with_defaults, with_ssl_context
from kafkabench.workers.delivery_consumer import POLL_S, PROGRESS_S
from kafkabench.workers.throughput_run import RunFailed

# the producer can do nothing more after these (aiokafka's sender treats the first three as fatal itself). A sequence
# out of order is one for aiokafka: it cannot bump its epoch (KIP-360), so once a batch has failed its sequence numbers
# stay ahead of the broker's and every later transaction fails the same way; a new producer (process) starts afresh
FATAL_PRODUCER_ERRORS = (ProducerFenced, OutOfOrderSequenceNumber, TransactionalIdAuthorizationFailed,
                         UnsupportedVersionError)


class ConsumerRun:
    def __init__(self, task: Task, params: DeliveryConsumerParams, report: Callable[[Progress], None]) -> None:
        self.task, self.params, self.report = task, params, report
        self.consumer: AIOKafkaConsumer | None = None
        self.producer: AIOKafkaProducer | None = None
        self.processed: Processed | None = None
        self.counters = dict.fromkeys(("processed", "commits", "aborted", "strays", "rebalances", "commit_failures"), 0)
        self.config: dict[str, dict] = {}
        self._committed_records = 0  # records whose offsets a confirmed commit covers
        self._next_progress = 0.0
        self._first_ns: int | None = None  # the first poll that returned records
        self._last_commit_ns: int | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None

    @property
    def copying(self) -> bool:
        return self.params.mode == "copy"

    # the synchronous interface: each call one coroutine on the run's loop

    def open(self) -> None:
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="aiokafka loop", daemon=True)
        self._thread.start()
        self._on_loop(self._open())

    def run(self, stop) -> None:
        """Until `stop` is set: poll a batch, and process, commit or copy it as the mode says."""
        self._on_loop(self._run(stop))

    def close(self) -> None:
        """The consumer stopped (auto-commit: its last commit), the producer flushed and stopped, the loop ended."""
        if self._loop is None:
            return
        try:
            self._on_loop(self._close())
        finally:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(self.task.timeout_s)
            if not self._thread.is_alive():
                self._loop.close()
            self._loop = None

    def _on_loop(self, coroutine):
        return asyncio.run_coroutine_threadsafe(coroutine, self._loop).result()

    # on the loop

    async def _open(self) -> None:
        params, task, timeout = self.params, self.task, self.task.timeout_s
        settings = {**task.consumer_config, "group_id": params.group, "auto_offset_reset": "earliest",
                    "enable_auto_commit": params.mode == "auto-commit",
                    **({"isolation_level": "read_committed"} if self.copying else {})}
        try:
            keywords = with_ssl_context(settings)
            self.config["consumer"] = with_defaults(AIOKafkaConsumer, {**settings, "bootstrap_servers":
                                                                        task.bootstrap_servers}, keywords)
            self.consumer = AIOKafkaConsumer(bootstrap_servers=task.bootstrap_servers, **keywords)
            await asyncio.wait_for(self.consumer.start(), timeout)
            if self.copying:
                producer = dict(task.producer_config)
                if not producer.get("transactional_id"):
                    raise RunFailed("config", "aiokafka: a copier's producer_config needs a transactional_id")
                keywords = with_ssl_context(producer)
                self.config["producer"] = with_defaults(AIOKafkaProducer, {**producer, "bootstrap_servers":
                                                                            task.bootstrap_servers}, keywords)
                self.producer = AIOKafkaProducer(bootstrap_servers=task.bootstrap_servers, **keywords)
                await asyncio.wait_for(self.producer.start(), timeout)  # its init_transactions: the producer id
        except (KafkaError, OSError, ValueError, TypeError, asyncio.TimeoutError) as exc:
            raise RunFailed("config", _text(exc)) from exc
        if not self.copying:
            self.processed = Processed.create(params.history_dir, params.producer, params.count)
        self.consumer.subscribe([task.topic], listener=_Rebalances(self.counters))

    async def _run(self, stop) -> None:
        step = {"auto-commit": self._process, "commit-after": self._process_then_commit,
                "commit-before": self._commit_then_process, "copy": self._copy}[self.params.mode]
        while not stop.is_set():
            records = await self._poll()
            if records:
                if self._first_ns is None:
                    self._first_ns = time.monotonic_ns()
                await step(records)
            self._progress()
        self._progress(force=True)

    async def _poll(self) -> list:
        try:
            batches = await self.consumer.getmany(timeout_ms=int(POLL_S * 1000), max_records=self.params.batch)
        except KafkaError as exc:
            if exc.retriable:
                return []
            raise RunFailed("failure", f"the consumer failed: {_text(exc)}") from exc
        return list(itertools.chain.from_iterable(batches.values()))

    async def _process(self, records: list) -> None:
        pause, processed = self.params.process_ms / 1000, self.processed
        for record in records:
            if pause:
                await asyncio.sleep(pause)
            if (sequence := self._sequence(record)) is not None:
                processed.record(sequence)
                self.counters["processed"] += 1

    async def _process_then_commit(self, records: list) -> None:
        await self._process(records)
        await self._commit(records)

    async def _commit_then_process(self, records: list) -> None:
        if await self._commit(records):
            await self._process(records)

    async def _commit(self, records: list) -> bool:
        """Commit the batch's offsets; a commit refused (a rebalance moved the partitions) is counted, and its
        records are another member's now: commit-before leaves them unprocessed, commit-after has processed them."""
        offsets = _next_offsets(records)
        try:
            await asyncio.wait_for(self.consumer.commit(self._positions(offsets)), self.task.timeout_s)
        except (KafkaError, asyncio.TimeoutError):
            self.counters["commit_failures"] += 1
            return False
        with (Path(self.params.history_dir) / COMMITS).open("a") as log:
            log.write(Processed.commit_line(offsets))
        self._committed(records)
        return True

    async def _copy(self, records: list) -> None:
        """The batch's ids (strays are counted, not copied) and its offsets in one transaction."""
        producer, output = self.producer, self.params.output_topic
        copies = [record for record in records if self._sequence(record) is not None]
        sent: list[asyncio.Future] = []
        try:
            await self._bounded("begin_transaction", producer.begin_transaction())
            for record in copies:
                sent.append(await producer.send(output, value=record.value, partition=record.partition))
            await self._bounded("send_offsets_to_transaction", producer.send_offsets_to_transaction(
                self._positions(_next_offsets(records)), self.params.group))
            await self._delivered(sent)
            await self._bounded("commit_transaction", producer.commit_transaction())
        except FATAL_PRODUCER_ERRORS as exc:
            raise RunFailed("failure", f"the copier's producer can go no further: {_text(exc)}") from exc
        except KafkaError as exc:
            await self._abort(exc)
            return
        finally:
            _retrieved(sent)
        self.counters["processed"] += len(copies)
        self._committed(records)

    async def _delivered(self, sent: list[asyncio.Future]) -> None:
        """Every copy acknowledged, or the first one's error raised: aiokafka would commit without it."""
        if not sent:
            return
        _, pending = await asyncio.wait(sent, timeout=self.task.timeout_s)
        if pending:
            raise RunFailed("failure", f"{len(pending)} of {len(sent)} copies unanswered after "
                                       f"{self.task.timeout_s:g} s")
        error = next((future.exception() for future in sent if future.exception() is not None), None)
        if error is not None:
            raise error

    async def _bounded(self, what: str, awaitable):
        """Await one of aiokafka's transactional calls (none has a timeout) for up to the task's timeout."""
        try:
            return await asyncio.wait_for(awaitable, self.task.timeout_s)
        except asyncio.TimeoutError:
            raise RunFailed("failure", f"aiokafka's {what} was not done within {self.task.timeout_s:g} s") from None

    def _committed(self, records: list) -> None:
        self.counters["commits"] += 1
        self._committed_records += len(records)
        self._last_commit_ns = time.monotonic_ns()

    async def _abort(self, error: KafkaError) -> None:
        """An abortable error: the transaction aborted, the consumer back at its committed offsets."""
        try:
            await self._bounded("abort_transaction", self.producer.abort_transaction())
        except RunFailed as failed:
            raise RunFailed("failure", f"after {_text(error)}, the abort failed too: {failed.message}") from failed
        except Exception as exc:  # aiokafka's fatal state refuses the abort with an AssertionError on its state
            raise RunFailed("failure", f"after {_text(error)}, the abort failed too: {_text(exc)}") from exc
        self.counters["aborted"] += 1
        try:
            for tp in self.consumer.assignment():
                committed = await asyncio.wait_for(self.consumer.committed(tp), self.task.timeout_s)
                if committed is None:
                    await self.consumer.seek_to_beginning(tp)
                else:
                    self.consumer.seek(tp, committed)
        except (KafkaError, asyncio.TimeoutError) as exc:
            raise RunFailed("failure", f"after an abort, the committed offsets could not be read: "
                                       f"{_text(exc)}") from exc

    async def _close(self) -> None:
        for client in (self.consumer, self.producer):
            if client is not None:
                try:
                    await asyncio.wait_for(client.stop(), self.task.timeout_s)
                except (KafkaError, asyncio.TimeoutError):
                    pass

    def _sequence(self, record) -> int | None:
        """The record's sequence, or None (counted as a stray) when it is not an id of the input producer."""
        value = record.value
        if value is None or len(value) < ids.ID_BYTES or value[:4] != ids.MAGIC:
            self.counters["strays"] += 1
            return None
        producer, sequence = int.from_bytes(value[4:6], "big"), int.from_bytes(value[6:14], "big")
        if producer != self.params.producer or sequence >= self.params.count:
            self.counters["strays"] += 1
            return None
        return sequence

    def _positions(self, offsets: dict[int, int]) -> dict[TopicPartition, int]:
        return {TopicPartition(self.task.topic, p): o for p, o in offsets.items()}

    def _progress(self, force: bool = False) -> None:
        now = time.monotonic()
        if force or now >= self._next_progress:
            self._next_progress = now + PROGRESS_S
            self.report(Progress(done=self.counters["processed"], acked=self._committed_records))

    def outcome(self, version: str) -> Outcome:
        """Its counts, and its stopwatch: the first poll that returned records to the last commit."""
        timed = self._first_ns is not None and self._last_commit_ns is not None
        return Outcome(client_version=version, counters=dict(self.counters), effective_config=self.config,
                       **({"start_ns": self._first_ns, "end_ns": self._last_commit_ns,
                           "duration_s": (self._last_commit_ns - self._first_ns) / 1e9} if timed else {}))


class _Rebalances(ConsumerRebalanceListener):
    """Counts assignments, as confluent's on_assign does."""

    def __init__(self, counters: dict[str, int]) -> None:
        self.counters = counters

    def on_partitions_revoked(self, revoked) -> None:
        pass

    def on_partitions_assigned(self, assigned) -> None:
        self.counters["rebalances"] += 1


def _next_offsets(records: list) -> dict[int, int]:
    """Per partition, the offset after the batch's last record: where the next read starts."""
    return {record.partition: record.offset + 1 for record in records}


def _retrieved(sent: list[asyncio.Future]) -> None:
    """The copies' errors taken (now, or when they come): a transaction aborted or failed before its answers were
    read would otherwise log "Future exception was never retrieved" once per copy."""
    for future in sent:
        if future.done():
            _taken(future)
        else:
            future.add_done_callback(_taken)


def _taken(future: asyncio.Future) -> None:
    if not future.cancelled():
        future.exception()


def _text(exc: BaseException) -> str:
    """aiokafka's errors name themselves; asyncio's timeout and others do not."""
    return str(exc) if isinstance(exc, KafkaError) else f"{type(exc).__name__}: {exc}".rstrip(": ")

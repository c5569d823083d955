"""A delivery consumer or copier with confluent-kafka (librdkafka): its calls in delivery_consumer.ConsumerRun.

- The copier's transaction carries the batch's offsets with the consumer's group metadata (send_offsets_to_transaction,
  KIP-447), so a copier that lost its partitions in a rebalance is fenced by the group coordinator. A commit that timed
  out is tried again (librdkafka: retriable) within the task's timeout. An abortable error (txn_requires_abort) aborts;
  a fatal one, or one that neither retries nor aborts, ends the process.
- Poll errors are messages: a fatal one ends the run, others (a broker down, a partition's leader moving) are skipped.
- commit(asynchronous=False) takes no timeout: the watchdog bounds it, as it bounds close().
"""

from __future__ import annotations

import time

import confluent_kafka
from confluent_kafka import Consumer, KafkaError, KafkaException, Producer, TopicPartition

from kafkabench.workers.adapters.base import printable
from kafkabench.workers.delivery_consumer import POLL_S, ConsumerRun
from kafkabench.workers.throughput_run import RunFailed


class ConfluentConsumerRun(ConsumerRun):
    client = "confluent"

    def _open_clients(self) -> None:
        params, task = self.params, self.task
        settings = {**task.consumer_config, "bootstrap.servers": task.bootstrap_servers, "group.id": params.group,
                    "auto.offset.reset": "earliest", "enable.auto.commit": params.mode == "auto-commit",
                    "enable.partition.eof": False,
                    **({"isolation.level": "read_committed"} if self.copying else {})}
        self.config["consumer"] = printable(settings)
        try:
            self.consumer = Consumer(settings)
            if self.copying:
                producer = {**task.producer_config, "bootstrap.servers": task.bootstrap_servers}
                self.config["producer"] = printable(producer)
                self.producer = Producer(producer)
                self.producer.init_transactions(task.timeout_s)
        except KafkaException as exc:
            raise RunFailed("config", exc.args[0].str()) from exc

    def _subscribe(self) -> None:
        self.consumer.subscribe([self.params.pattern or self.task.topic],  # librdkafka: a name from ^ is a pattern
                                on_assign=lambda _, partitions: self.on_assigned(
                                    [self.key(tp.topic, tp.partition) for tp in partitions]),
                                on_revoke=self._lost, on_lost=self._lost)

    def _lost(self, _consumer, partitions) -> None:
        self.on_revoked([self.key(tp.topic, tp.partition) for tp in partitions])

    def _poll(self) -> list:
        """Up to `batch` records, returned as soon as one is there (as Java's poll does): consume(batch, timeout) alone
        would hold the first record until the batch filled or the timeout passed, 0.2 s of waiting that is ours."""
        first = self.consumer.poll(POLL_S)
        if first is None:
            return []
        messages = [first, *self.consumer.consume(self.params.batch - 1, 0)] if self.params.batch > 1 else [first]
        for message in messages:
            if (error := message.error()) is not None and error.fatal():
                raise RunFailed("failure", f"the consumer failed: {error.str()}")
        return [message for message in messages if message.error() is None]

    def _values(self, records: list) -> list:
        return [record.value() for record in records]

    def _timestamps(self, records: list) -> list[int]:
        return [record.timestamp()[1] for record in records]

    def _next_offsets(self, records: list) -> dict[int, int]:
        if self.params.pattern is None:  # one topic: a record's partition is its key, one call fewer per record
            return {record.partition(): record.offset() + 1 for record in records}
        return {self.key(record.topic(), record.partition()): record.offset() + 1 for record in records}

    def _positions(self, offsets: dict[int, int]) -> list[TopicPartition]:
        return [TopicPartition(*self.topic_partition(key), o) for key, o in offsets.items()]

    def _commit_offsets(self, offsets: dict[int, int]) -> bool:
        try:
            self.consumer.commit(offsets=self._positions(offsets), asynchronous=False)
        except KafkaException as exc:
            if exc.args[0].fatal():
                raise RunFailed("failure", f"a commit failed: {exc.args[0].str()}") from exc
            return False
        return True

    def _transact(self, records: list, copies: list[int]) -> bool:
        producer, output, timeout = self.producer, self.params.output_topic, self.task.timeout_s
        try:
            with self.call("begin_transaction"):
                producer.begin_transaction()
            with self.call("produce"):
                for index in copies:
                    producer.produce(output, records[index].value(), partition=records[index].partition())
            with self.call("send_offsets_to_transaction"):
                producer.send_offsets_to_transaction(self._positions(self._next_offsets(records)),
                                                     self.consumer.consumer_group_metadata(), timeout)
            with self.call("commit_transaction"):
                self._commit_transaction()
        except KafkaException as exc:
            error: KafkaError = exc.args[0]
            if error.fatal() or not error.txn_requires_abort():
                raise RunFailed("failure", f"the copier's producer can go no further: {error.str()}") from exc
            self._abort(error)
            return False
        return True

    def _commit_transaction(self) -> None:
        """A commit that timed out may be tried again (librdkafka: retriable), within the task's timeout."""
        deadline = time.monotonic() + self.task.timeout_s
        while True:
            try:
                self.producer.commit_transaction(max(0.1, deadline - time.monotonic()))
                return
            except KafkaException as exc:
                if not exc.args[0].retriable() or time.monotonic() >= deadline:
                    raise

    def _abort(self, error: KafkaError) -> None:
        """An abortable error: the transaction aborted, the consumer back at its committed offsets."""
        try:
            with self.call("abort_transaction"):
                self.producer.abort_transaction(self.task.timeout_s)
        except KafkaException as exc:
            raise RunFailed("failure", f"after {error.str()}, the abort failed too: {exc.args[0].str()}") from exc
        try:
            with self.call("committed (the rewind after an abort)"):
                assignment = self.consumer.assignment()
                committed = self.consumer.committed(assignment, self.task.timeout_s) if assignment else []
        except KafkaException as exc:
            raise RunFailed("failure", f"after an abort, the committed offsets could not be read: "
                                       f"{exc.args[0].str()}") from exc
        for one in committed:
            offset = one.offset if one.offset >= 0 else confluent_kafka.OFFSET_BEGINNING
            self.consumer.seek(TopicPartition(one.topic, one.partition, offset))

    def _close_clients(self) -> None:
        if self.consumer is not None:
            self.consumer.close()
        if self.producer is not None:
            try:
                self.producer.flush(self.task.timeout_s)
            except KafkaException:  # a fenced producer refuses even this: what it had to say is said
                pass

"""A share group's member (KIP-932) with confluent-kafka's ShareConsumer (a preview in 2.15 and 2.16): the share mode's
calls in delivery_consumer.ConsumerRun.

- `max.poll.records` is the task's batch, as the Java member's: the records a member holds at once, and so what a
  crash hands out again.
- `share.acknowledgement.mode=explicit`: each record of a poll acknowledged ACCEPT after the batch was processed, then
  commit_sync, whose answer per partition says whether the broker took them. A partition's refusal (its records'
  locks expired, a leader moved) is counted and the run goes on: those records come again, their delivery count one
  higher. The client refuses a poll while records of the last one are unacknowledged, so strays are accepted too.
- The share consumer has no assignment to report and no rebalance callbacks: the broker hands each member records,
  not partitions.
"""

from __future__ import annotations

from confluent_kafka import AcknowledgeType, KafkaException, ShareConsumer

from kafkabench.workers.adapters.base import printable
from kafkabench.workers.delivery_consumer import POLL_S, ConsumerRun
from kafkabench.workers.throughput_run import RunFailed


class ConfluentShareRun(ConsumerRun):
    client = "confluent"

    def _open_clients(self) -> None:
        settings = {**self.task.consumer_config, "bootstrap.servers": self.task.bootstrap_servers,
                    "group.id": self.params.group, "share.acknowledgement.mode": "explicit",
                    "max.poll.records": self.params.batch}
        self.config["consumer"] = printable(settings)
        try:
            self.consumer = ShareConsumer(settings)
        except KafkaException as exc:
            raise RunFailed("config", exc.args[0].str()) from exc

    def _subscribe(self) -> None:
        self.consumer.subscribe([self.task.topic])

    def _poll(self) -> list:
        try:
            messages = list(self.consumer.poll(POLL_S))
        except KafkaException as exc:
            if exc.args[0].fatal():
                raise RunFailed("failure", f"the share consumer failed: {exc.args[0].str()}") from exc
            return []
        for message in messages:
            if (error := message.error()) is not None and error.fatal():
                raise RunFailed("failure", f"the share consumer failed: {error.str()}")
        return [message for message in messages if message.error() is None]

    def _values(self, records: list) -> list:
        return [record.value() for record in records]

    def _timestamps(self, records: list) -> list[int]:
        return [record.timestamp()[1] for record in records]

    def _delivery_counts(self, records: list) -> list[int]:
        return [record.delivery_count() or 0 for record in records]

    def _acknowledge(self, records: list) -> bool:
        try:
            for record in records:
                self.consumer.acknowledge(record, AcknowledgeType.ACCEPT)
            answers = self.consumer.commit_sync(self.task.timeout_s)
        except KafkaException as exc:
            if exc.args[0].fatal():
                raise RunFailed("failure", f"acknowledging failed: {exc.args[0].str()}") from exc
            return False
        return all(answer is None for answer in answers.values())

    def _close_clients(self) -> None:
        if self.consumer is not None:
            self.consumer.close()

"""A minimal hand-written confluent-kafka transactional copier: the yardstick for kafkabench's copier (the delivery
worker's copy mode), as Apache Kafka's TransactionalMessageCopier copies.

    python minimal_confluent_copier.py BOOTSTRAP INPUT OUTPUT GROUP TRANSACTIONAL_ID BATCH COUNT [KEY=VALUE ...]

No kafkabench code. One consumer in GROUP (read_committed, no auto-commit, from the earliest offset) and one
transactional producer: each poll of up to BATCH records is written unchanged to the same partition of OUTPUT in a
transaction that carries the batch's next offsets (send_offsets_to_transaction with the consumer's group metadata),
then committed; until COUNT records are committed. KEY=VALUE: producer settings (librdkafka's names). Prints one JSON line: records, transactions, seconds (the first
poll that returned records -> the last commit returned).
"""

import json
import sys
import time

from confluent_kafka import Consumer, Producer, TopicPartition


def main() -> None:
    bootstrap, source, output, group, transactional_id, batch, count = sys.argv[1:8]
    batch, count = int(batch), int(count)
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group, "auto.offset.reset": "earliest",
                         "enable.auto.commit": False, "isolation.level": "read_committed"})
    settings = dict(pair.split("=", 1) for pair in sys.argv[8:])
    producer = Producer({"bootstrap.servers": bootstrap, "transactional.id": transactional_id, **settings})
    producer.init_transactions(60)
    consumer.subscribe([source])
    copied = transactions = 0
    first = last = None
    while copied < count:
        records = [record for record in consumer.consume(batch, 0.2) if record.error() is None]
        if not records:
            continue
        first = first or time.monotonic_ns()
        producer.begin_transaction()
        offsets = {}
        for record in records:
            producer.produce(output, record.value(), partition=record.partition())
            offsets[record.partition()] = record.offset() + 1
        producer.send_offsets_to_transaction([TopicPartition(source, p, o) for p, o in offsets.items()],
                                             consumer.consumer_group_metadata(), 60)
        producer.commit_transaction(60)
        last = time.monotonic_ns()
        copied += len(records)
        transactions += 1
    consumer.close()
    print(json.dumps({"records": copied, "transactions": transactions, "seconds": (last - first) / 1e9}))


main()

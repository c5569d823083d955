"""A minimal hand-written confluent-kafka consumer that commits after processing: the yardstick for a groups lab
member (the delivery worker's commit-after mode).

    python minimal_confluent_commit_after.py BOOTSTRAP TOPIC GROUP BATCH COUNT

No kafkabench code. One consumer in GROUP (no auto-commit, from the earliest offset): each poll of up to BATCH
records is processed (the id's sequence read from bytes 6..13 of the value and counted in an array) and its next
offsets committed synchronously; until COUNT records are processed. Prints one JSON line: records, commits, seconds
(the first poll that returned records -> the last commit returned).
"""

import json
import sys
import time

from confluent_kafka import Consumer, TopicPartition


def main() -> None:
    bootstrap, topic, group, batch, count = sys.argv[1:6]
    batch, count = int(batch), int(count)
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group, "auto.offset.reset": "earliest",
                         "enable.auto.commit": False})
    consumer.subscribe([topic])
    processed, counts = 0, bytearray(count)
    commits = 0
    first = last = None
    while processed < count:
        records = [record for record in consumer.consume(batch, 0.2) if record.error() is None]
        if not records:
            continue
        first = first or time.monotonic_ns()
        offsets = {}
        for record in records:
            counts[int.from_bytes(record.value()[6:14], "big")] += 1
            offsets[record.partition()] = record.offset() + 1
        consumer.commit(offsets=[TopicPartition(topic, p, o) for p, o in offsets.items()], asynchronous=False)
        last = time.monotonic_ns()
        processed += len(records)
        commits += 1
    consumer.close()
    print(json.dumps({"records": processed, "commits": commits, "seconds": (last - first) / 1e9}))


main()

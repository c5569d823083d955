"""A minimal hand-written confluent-kafka share consumer (KIP-932) that accepts each record after processing it: the
yardstick for a groups lab member of a share group (the delivery worker's share mode).

    python minimal_confluent_share.py BOOTSTRAP TOPIC GROUP BATCH COUNT

No kafkabench code. One ShareConsumer in GROUP (max.poll.records=BATCH, explicit acknowledgement; the group's share.auto.offset.reset set to
earliest beforehand by the caller): each poll's records processed (the id's sequence read from bytes 6..13 of the
value and counted in an array), each accepted, and the acknowledgements committed synchronously; until COUNT records
are processed. Prints one JSON line: records, commits, seconds (the first poll that returned records -> the last
commit returned).
"""

import json
import sys
import time

from confluent_kafka import AcknowledgeType, ShareConsumer


def main() -> None:
    bootstrap, topic, group, batch, count = sys.argv[1:6]
    count = int(count)
    consumer = ShareConsumer({"bootstrap.servers": bootstrap, "group.id": group, "max.poll.records": int(batch),
                              "share.acknowledgement.mode": "explicit"})
    consumer.subscribe([topic])
    processed, counts, commits = 0, bytearray(count), 0
    first = last = None
    while processed < count:
        records = [record for record in consumer.poll(0.2) if record.error() is None]
        if not records:
            continue
        first = first or time.monotonic_ns()
        for record in records:
            sequence = int.from_bytes(record.value()[6:14], "big")
            counts[sequence] = min(255, counts[sequence] + 1)
            consumer.acknowledge(record, AcknowledgeType.ACCEPT)
        consumer.commit_sync(60)
        last = time.monotonic_ns()
        processed += len(records)
        commits += 1
    consumer.close()
    print(json.dumps({"records": processed, "commits": commits, "seconds": (last - first) / 1e9}))


main()

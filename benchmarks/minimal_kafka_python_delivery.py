"""A minimal hand-written kafka-python loop that knows where every message went: the yardstick for kafkabench's
delivery worker (async-close) with kafka-python.

    python minimal_kafka_python_delivery.py BOOTSTRAP TOPIC SIZE COUNT [-X key=value ...]

No kafkabench code. Message i's value is an id (b"kbd1", producer 0 as uint16, i as uint64, big-endian) padded to
SIZE bytes; acks=1 unless -X (kafka-python's keywords) says otherwise. send() returns a future per message; its
callback keeps (i, partition, offset), its errback (i, the error). Callbacks run in kafka-python's I/O thread;
then flush. Prints one JSON line: records (acknowledged), errors, seconds (first send -> flush returned).
"""

import struct
import time

from kafka import KafkaProducer

from minimal_common import parse_args, report_produce


def main() -> None:
    args, settings = parse_args(__doc__, True, {"acks": 1}, typed=True)
    acked, failed = [], []
    keep, fail = acked.append, failed.append

    def delivered(sequence: int, metadata) -> None:
        keep((sequence, metadata.partition, metadata.offset))

    def refused(sequence: int, exc: Exception) -> None:
        fail((sequence, exc))

    producer = KafkaProducer(bootstrap_servers=args.bootstrap.split(","), **settings)
    send, topic, pack, padding = producer.send, args.topic, struct.Struct(">4sHQ").pack, bytes(max(args.size - 14, 0))
    start = time.monotonic_ns()
    for i in range(args.count):
        send(topic, pack(b"kbd1", 0, i) + padding).add_callback(delivered, i).add_errback(refused, i)
    producer.flush()
    seconds = (time.monotonic_ns() - start) / 1e9
    report_produce([0.0] * len(acked), len(failed), seconds)
    producer.close()


main()

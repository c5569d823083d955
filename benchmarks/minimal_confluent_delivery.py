"""A minimal hand-written confluent-kafka loop that knows where every message went: the yardstick for
kafkabench's delivery worker (its async-close mode).

    python minimal_confluent_delivery.py BOOTSTRAP TOPIC SIZE COUNT [-X key=value ...]

No kafkabench code. Message i's value is an id (b"kbd1", producer 0 as uint16, i as uint64, big-endian) padded
to SIZE bytes, made at its send as a real producer makes each value; acks=1 unless -X says otherwise. One
delivery callback (set once in the config) reads the id back out of the acknowledged value and keeps
(sequence, partition, offset) or the error: the least a loop must do to say what became of each message.
Callbacks are served with poll(0) every 1000 sends and while the queue is full, then flush. Prints one JSON
line: records (acknowledged), errors, seconds (clock before the first send -> flush returned).
"""

import struct
import sys
import time

from confluent_kafka import Producer

from minimal_common import parse_args, report_produce

SERVE_EVERY = 1000


def main() -> None:
    args, settings = parse_args(__doc__, True, {"acks": "1"}, typed=False)
    acked, failed = [], []
    keep, fail, unpack = acked.append, failed.append, struct.Struct(">4sHQ").unpack_from

    def delivered(err, msg) -> None:
        if err is None:
            keep((unpack(msg.value())[2], msg.partition(), msg.offset()))
        else:
            fail(err)

    producer = Producer({"bootstrap.servers": args.bootstrap, "on_delivery": delivered, **settings})
    produce, poll, topic, count = producer.produce, producer.poll, args.topic, args.count
    pack, padding = struct.Struct(">4sHQ").pack, bytes(max(args.size - 14, 0))
    start = time.monotonic_ns()
    i = 0
    while i < count:
        try:
            produce(topic, pack(b"kbd1", 0, i) + padding)
        except BufferError:
            poll(0.05)
            continue
        i += 1
        if i % SERVE_EVERY == 0:
            poll(0)
    if producer.flush(120):
        print(f"{len(producer)} records still unacknowledged after 120 s", file=sys.stderr)
    seconds = (time.monotonic_ns() - start) / 1e9
    report_produce([0.0] * len(acked), len(failed), seconds)


main()

"""A minimal hand-written confluent-kafka produce loop, the yardstick for kafkabench's produce.

    python minimal_confluent_produce.py BOOTSTRAP TOPIC SIZE COUNT [-X key=value ...]

No kafkabench code. COUNT records of one SIZE-byte random value, settings acks=1 batch.size=1000000
linger.ms=5 unless -X (librdkafka names) says otherwise. One delivery callback (set once in the config, so
a send carries no callback of its own) per record appends librdkafka's own latency of it, msg.latency():
produce() call -> delivery report, as kafkabench's publish_latency reads it for this client. Callbacks are
served with poll(0) every 1000 sends and while the queue is full (BufferError), then flush. Prints one
JSON line: records, errors, seconds (clock before the first send -> flush returned, every ack served),
records_per_s, latency_us p50/p99 (computed after the clock stopped).
"""

import os
import sys
import time

from confluent_kafka import Producer

from minimal_common import parse_args, report_produce

SERVE_EVERY = 1000


def main() -> None:
    args, settings = parse_args(__doc__, True, {"acks": "1", "batch.size": "1000000", "linger.ms": "5"}, typed=False)
    latencies, failed = [], []
    latency, fail = latencies.append, failed.append

    def delivered(err, msg) -> None:
        if err is None:
            latency(msg.latency())
        else:
            fail(err)

    producer = Producer({"bootstrap.servers": args.bootstrap, "on_delivery": delivered, **settings})
    produce, poll, topic, value, count = producer.produce, producer.poll, args.topic, os.urandom(args.size), args.count
    start = time.monotonic_ns()
    i = 0
    while i < count:
        try:
            produce(topic, value)
        except BufferError:
            poll(0.05)  # returns as soon as a callback was served
            continue
        i += 1
        if i % SERVE_EVERY == 0:
            poll(0)
    if producer.flush(120):
        print(f"{len(producer)} records still unacknowledged after 120 s", file=sys.stderr)
    seconds = (time.monotonic_ns() - start) / 1e9
    report_produce([s * 1e6 for s in latencies], len(failed), seconds)


main()

"""A minimal hand-written kafka-python produce loop, the yardstick for kafkabench's produce.

    python minimal_kafka_python_produce.py BOOTSTRAP TOPIC SIZE COUNT [-X key=value ...]

No kafkabench code. COUNT records of one SIZE-byte random value, settings acks=1 batch_size=1000000
linger_ms=5 unless -X (kafka-python's keywords) says otherwise. send() returns a future per record; one
callback (add_callback, errors through add_errback) reads the monotonic clock into a preallocated list.
Callbacks run in kafka-python's own I/O thread, so nothing needs serving; send() blocks while the buffer is
full; then flush. The topic has one partition, so acks come back in send order and the i-th callback
belongs to the i-th send. Prints one JSON line: records, errors, seconds (first send -> last ack),
records_per_s, latency_us p50/p99 (send call -> ack callback, as kafkabench's publish_latency), computed
after the clock stopped.
"""

import os
import time

from kafka import KafkaProducer

from minimal_common import parse_args, report_acks


def main() -> None:
    args, settings = parse_args(__doc__, True, {"acks": 1, "batch_size": 1_000_000, "linger_ms": 5}, typed=True)
    count, clock = args.count, time.monotonic_ns
    sent, acked, failed = [0] * count, [0] * count, []
    done = 0

    def delivered(_metadata) -> None:
        nonlocal done
        acked[done] = clock()
        done += 1

    def error(_exc) -> None:
        nonlocal done
        acked[done] = clock()
        failed.append(done)
        done += 1

    producer = KafkaProducer(bootstrap_servers=args.bootstrap.split(","), **settings)
    send, topic, value = producer.send, args.topic, os.urandom(args.size)
    for i in range(count):
        sent[i] = clock()
        send(topic, value).add_callback(delivered).add_errback(error)
    producer.flush()
    report_acks(sent, acked, done, failed)
    producer.close()


main()

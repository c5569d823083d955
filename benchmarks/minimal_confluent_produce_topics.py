"""A minimal hand-written confluent-kafka produce loop over many topics, the yardstick for `produce --topics`.

    python minimal_confluent_produce_topics.py BOOTSTRAP PREFIX SIZE COUNT --topics T [--run N] [-X key=value ...]

No kafkabench code. As minimal_confluent_produce.py, over T topics PREFIX-0000 ... PREFIX-{T-1:04d} in turn, N
records to each before the next (default 256, as kafkabench's producer sends a batch to each topic; 1: each record
to the next topic). Prints the same JSON line.
"""

import os
import sys
import time

from confluent_kafka import Producer

from minimal_common import parse_args, report_produce

SERVE_EVERY = 1000


def _option(name: str, default: str | None) -> str:
    """The value of `name` taken out of the command line (parse_args knows only the shared arguments)."""
    if name not in sys.argv:
        if default is None:
            raise SystemExit(f"{name} is required")
        return default
    at = sys.argv.index(name)
    value = sys.argv[at + 1]
    del sys.argv[at:at + 2]
    return value


def main() -> None:
    topics, run = (int(_option(name, default)) for name, default in (("--topics", None), ("--run", "256")))
    args, settings = parse_args(__doc__, True, {"acks": "1", "batch.size": "1000000", "linger.ms": "5"}, typed=False)
    latencies, failed = [], []
    latency, fail = latencies.append, failed.append

    def delivered(err, msg) -> None:
        if err is None:
            latency(msg.latency())
        else:
            fail(err)

    producer = Producer({"bootstrap.servers": args.bootstrap, "on_delivery": delivered, **settings})
    names = [f"{args.topic}-{index:04d}" for index in range(topics)]
    produce, poll, value, count = producer.produce, producer.poll, os.urandom(args.size), args.count
    start = time.monotonic_ns()
    i = 0
    while i < count:
        try:
            produce(names[i // run % topics], value)
        except BufferError:
            poll(0.05)
            continue
        i += 1
        if i % SERVE_EVERY == 0:
            poll(0)
    if producer.flush(120):
        print(f"{len(producer)} records still unacknowledged after 120 s", file=sys.stderr)
    seconds = (time.monotonic_ns() - start) / 1e9
    report_produce([s * 1e6 for s in latencies], len(failed), seconds)


main()

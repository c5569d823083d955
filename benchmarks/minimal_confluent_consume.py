"""A minimal hand-written confluent-kafka consume loop, the yardstick for kafkabench's consume.

    python minimal_confluent_consume.py BOOTSTRAP TOPIC COUNT [-X key=value ...]

No kafkabench code. A Consumer in a fresh group (uuid), auto.offset.reset=earliest, enable.auto.commit=false
(-X, in librdkafka names, adds or replaces settings), subscribes and consumes until COUNT records are in
hand, asking for at most what is still missing (10,000 at a time); per record only msg.error() and
len(value). Prints one JSON line: records, bytes, seconds, records_per_s.

consume(n, timeout) returns only once it has n messages or the timeout ran out: it blocks for the whole
timeout whenever fewer than n are queued (measured: consume(10000, 1.0) on a trickle of 20 records/s took
1000 ms every time; consume(10000, 0) returned what was queued in < 0.1 ms). While it waits, librdkafka's
queue fills up to queued.max.messages.kbytes (64 MB: 6,400 records of 10 KB) and fetching then backs off
for fetch.queue.backoff.ms (1 s): a plain consume(10000, 0.1) loop read 10 KB records at ~15,000 records/s,
this one at 50,000-78,000. So: consume(n, 0) takes what is queued, and only when nothing is, consume(1, 0.1)
waits for the first record to arrive.

Duration, as kafkabench's consume defines it: kafkabench's worker subscribes, waits until its partitions are
assigned, then starts its clock on the start signal and stops it when the last record is in hand. Here the
clock starts inside the on_assign callback (the moment the partitions are assigned, before any fetch) and
stops when the consume() call that returned the COUNT-th record returns. Records fetched in the call that
ran on_assign count, as kafkabench's early records do.
"""

import sys
import time
import uuid

from confluent_kafka import Consumer

from minimal_common import parse_args, report_consume

BATCH, IDLE_S = 10_000, 30


def main() -> None:
    args, settings = parse_args(__doc__, False, {"auto.offset.reset": "earliest", "enable.auto.commit": "false"}, typed=False)
    consumer = Consumer({"bootstrap.servers": args.bootstrap, "group.id": f"minimal-{uuid.uuid4().hex}", **settings})
    clock, count = time.monotonic_ns, args.count
    start = last = None

    def on_assign(_consumer, _partitions) -> None:  # returning without assign(): the client assigns them itself
        nonlocal start
        start = start or clock()

    consumer.subscribe([args.topic], on_assign=on_assign)
    consume, records, payload = consumer.consume, 0, 0
    idle_since = clock()
    while records < count:
        messages = consume(min(BATCH, count - records), 0) or consume(1, 0.1)
        now = clock()
        if not messages:
            if now - idle_since > IDLE_S * 1e9:
                print(f"no record for {IDLE_S} s: stopping at {records} of {count}", file=sys.stderr)
                break
            continue
        for msg in messages:
            if msg.error():
                raise SystemExit(f"consume failed: {msg.error().str()}")
            payload += len(msg.value())
        records += len(messages)
        last = idle_since = now
    report_consume(records, payload, start or 0, last)
    consumer.close()


main()

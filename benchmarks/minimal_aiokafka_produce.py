"""A minimal hand-written aiokafka produce loop, the yardstick for kafkabench's produce.

    python minimal_aiokafka_produce.py BOOTSTRAP TOPIC SIZE COUNT [-X key=value ...]

No kafkabench code. The whole loop is one asyncio coroutine: COUNT records of one SIZE-byte random value,
settings acks=1 max_batch_size=1000000 linger_ms=5 unless -X (aiokafka's keywords) says otherwise.
`fut = await producer.send(...)` (it waits while the accumulator is full), then one done-callback per
record reads the monotonic clock into a preallocated list; then flush. The topic has one partition, so
acks come back in send order and the i-th callback belongs to the i-th send. Prints one JSON line:
records, errors, seconds (first send -> last ack), records_per_s, latency_us p50/p99 (send call -> ack
callback, as kafkabench's publish_latency), computed after the clock stopped.
"""

import asyncio
import os
import time

from aiokafka import AIOKafkaProducer

from minimal_common import parse_args, report_acks


async def main() -> None:
    args, settings = parse_args(__doc__, True, {"acks": 1, "max_batch_size": 1_000_000, "linger_ms": 5}, typed=True)
    count, clock = args.count, time.monotonic_ns
    sent, acked, failed = [0] * count, [0] * count, []
    done = 0

    def delivered(future: asyncio.Future) -> None:
        nonlocal done
        acked[done] = clock()
        if future.cancelled() or future.exception() is not None:
            failed.append(done)
        done += 1

    producer = AIOKafkaProducer(bootstrap_servers=args.bootstrap, **settings)
    await producer.start()
    try:
        send, topic, value = producer.send, args.topic, os.urandom(args.size)
        for i in range(count):
            sent[i] = clock()
            future = await send(topic, value)
            future.add_done_callback(delivered)
        await producer.flush()
        while done < count:  # done-callbacks run on the loop's next turns
            await asyncio.sleep(0)
        report_acks(sent, acked, done, failed)
    finally:
        await producer.stop()


asyncio.run(main())

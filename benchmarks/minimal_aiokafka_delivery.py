"""A minimal hand-written aiokafka loop that knows where every message went: the yardstick for kafkabench's
delivery worker (async-close) with aiokafka.

    python minimal_aiokafka_delivery.py BOOTSTRAP TOPIC SIZE COUNT [-X key=value ...]

No kafkabench code. One asyncio coroutine: message i's value is an id (b"kbd1", producer 0 as uint16, i as
uint64, big-endian) padded to SIZE bytes; acks=1 unless -X (aiokafka's keywords) says otherwise.
`fut = await producer.send(...)`, then a done-callback per message keeps (i, partition, offset) or (i, the
error); then flush. Prints one JSON line: records (acknowledged), errors, seconds (first send -> flush returned
and every callback run).
"""

import asyncio
import functools
import struct
import time

from aiokafka import AIOKafkaProducer

from minimal_common import parse_args, report_produce


async def main() -> None:
    args, settings = parse_args(__doc__, True, {"acks": 1}, typed=True)
    acked, failed = [], []

    def delivered(sequence: int, future: asyncio.Future) -> None:
        if future.cancelled() or future.exception() is not None:
            failed.append(sequence)
        else:
            metadata = future.result()
            acked.append((sequence, metadata.partition, metadata.offset))

    producer = AIOKafkaProducer(bootstrap_servers=args.bootstrap, **settings)
    await producer.start()
    try:
        send, topic, pack, padding = producer.send, args.topic, struct.Struct(">4sHQ").pack, bytes(max(args.size - 14, 0))
        start = time.monotonic_ns()
        for i in range(args.count):
            future = await send(topic, pack(b"kbd1", 0, i) + padding)
            future.add_done_callback(functools.partial(delivered, i))
        await producer.flush()
        while len(acked) + len(failed) < args.count:  # done-callbacks run on the loop's next turns
            await asyncio.sleep(0)
        seconds = (time.monotonic_ns() - start) / 1e9
        report_produce([0.0] * len(acked), len(failed), seconds)
    finally:
        await producer.stop()


asyncio.run(main())

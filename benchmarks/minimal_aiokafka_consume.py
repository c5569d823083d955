"""A minimal hand-written aiokafka consume loop, the yardstick for kafkabench's consume.

    python minimal_aiokafka_consume.py BOOTSTRAP TOPIC COUNT [-X key=value ...]

No kafkabench code. The whole loop is one asyncio coroutine: an AIOKafkaConsumer in a fresh group (uuid),
auto_offset_reset=earliest, enable_auto_commit=False (-X, in aiokafka's keywords, adds or replaces
settings), subscribes and awaits getmany(timeout_ms=100, max_records=...) until COUNT records are in hand,
asking for at most what is still missing (10,000 at a time); per record only len(value). Prints one JSON
line: records, bytes, seconds, records_per_s.

Duration, as kafkabench's consume defines it (its start signal, sent once partitions are assigned, -> the
last record in hand): here from on_partitions_assigned to the return of the getmany() that brought the
COUNT-th record.
"""

import asyncio
import sys
import time
import uuid

from aiokafka import AIOKafkaConsumer
from aiokafka.abc import ConsumerRebalanceListener

from minimal_common import parse_args, report_consume

BATCH, IDLE_S = 10_000, 30


class Assigned(ConsumerRebalanceListener):
    start = None

    def on_partitions_assigned(self, assigned) -> None:
        self.start = self.start or time.monotonic_ns()

    def on_partitions_revoked(self, revoked) -> None:
        pass


async def main() -> None:
    args, settings = parse_args(__doc__, False, {"auto_offset_reset": "earliest", "enable_auto_commit": False}, typed=True)
    settings = {"group_id": f"minimal-{uuid.uuid4().hex}", **settings}
    consumer = AIOKafkaConsumer(bootstrap_servers=args.bootstrap, **settings)
    await consumer.start()
    try:
        clock, count, assigned = time.monotonic_ns, args.count, Assigned()
        consumer.subscribe([args.topic], listener=assigned)
        getmany, records, payload, last = consumer.getmany, 0, 0, None
        idle_since = clock()
        while records < count:
            batches = await getmany(timeout_ms=100, max_records=min(BATCH, count - records))
            now = clock()
            if not batches:
                if now - idle_since > IDLE_S * 1e9:
                    print(f"no record for {IDLE_S} s: stopping at {records} of {count}", file=sys.stderr)
                    break
                continue
            for batch in batches.values():
                for record in batch:
                    payload += len(record.value)
                records += len(batch)
            last = idle_since = now
        report_consume(records, payload, assigned.start or 0, last)
    finally:
        await consumer.stop()


asyncio.run(main())

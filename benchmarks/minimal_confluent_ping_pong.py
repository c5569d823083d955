"""A minimal hand-written confluent-kafka ping-pong loop, the yardstick for kafkabench's own overhead.

    python minimal_confluent_ping_pong.py BOOTSTRAP TOPIC SIZE COUNT WARMUP

No kafkabench code: produce one record, flush until its ack, poll until it is read back, repeat. Prints
the e2e latencies in microseconds as one JSON list on stdout (warm-up excluded).
"""

import json
import os
import sys
import time

from confluent_kafka import Consumer, Producer, TopicPartition

bootstrap, topic, size, count, warmup = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
limit = str(size + 1024)
producer = Producer({"bootstrap.servers": bootstrap, "acks": "1", "linger.ms": "0", "message.max.bytes": limit})
consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "minimal", "enable.auto.commit": "false",
                     "max.partition.fetch.bytes": limit})
_, end = consumer.get_watermark_offsets(TopicPartition(topic, 0), timeout=10)
consumer.assign([TopicPartition(topic, 0, end)])
value = os.urandom(size)
latencies = []
for i in range(warmup + count):
    start = time.monotonic_ns()
    producer.produce(topic, value)
    producer.flush(30)
    msg = None
    while msg is None:
        msg = consumer.poll(1.0)
    elapsed = time.monotonic_ns() - start
    assert msg.error() is None and len(msg.value()) == size
    if i >= warmup:
        latencies.append(elapsed // 1000)
consumer.close()
print(json.dumps(latencies))

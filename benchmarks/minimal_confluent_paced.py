"""A minimal hand-written paced confluent-kafka producer, the yardstick for kafkabench's open-loop producer.

    python minimal_confluent_paced.py BOOTSTRAP TOPIC SIZE COUNT RATE

No kafkabench code. COUNT records of one SIZE-byte random value, client defaults. Record i is due at
start + i / RATE; the loop waits for it in poll() (delivery reports are served meanwhile) while more than
a millisecond is left, then sleeps what is left, serving reports before, sends, and notes due ->
send call (delay). A report is timed when it is served, so how often the loop polls is part of the latency:
polling only after each send put 0.6 ms more into its p50 at 1,000/s. One delivery callback
(set once in the config) appends librdkafka's own latency of the record, msg.latency(): produce() call ->
delivery report, as kafkabench's publish_latency reads it for this client. Then flush. Prints one JSON line:
records, errors, seconds, records_per_s, latency_us and delay_us p50/p99, cpu_s (this process, the loop and
flush).
"""

import os
import sys
import time

from confluent_kafka import Producer

from minimal_common import print_paced


def main() -> None:
    bootstrap, topic, size, count, rate = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), float(sys.argv[5])
    latencies, delays, failed = [], [], []

    def delivered(err, msg) -> None:
        if err is None:
            latencies.append(msg.latency() * 1e6)
        else:
            failed.append(err)

    producer = Producer({"bootstrap.servers": bootstrap, "on_delivery": delivered})
    producer.list_topics(topic, timeout=30)  # metadata first, as kafkabench's worker has it before it starts
    value, clock = os.urandom(size), time.monotonic_ns
    cpu, start = time.process_time(), clock()
    for i in range(count):
        due = start + round(i * 1e9 / rate)
        while (gap := due - clock()) > 1_000_000:
            producer.poll((gap - 500_000) / 1e9)
        while (gap := due - clock()) > 0:
            producer.poll(0)
            time.sleep(gap / 1e9)
        sent = clock()
        producer.produce(topic, value)
        delays.append((sent - due) / 1e3)
        producer.poll(0)
    if producer.flush(120):
        print(f"{len(producer)} records still unacknowledged after 120 s", file=sys.stderr)
    print_paced(latencies, delays, len(failed), (clock() - start) / 1e9, time.process_time() - cpu)


main()

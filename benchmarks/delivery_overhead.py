"""Does kafkabench's delivery worker send at the client's own speed while it records every answer?
kafkabench / a minimal loop, per Python client.

    .venv/bin/python benchmarks/delivery_overhead.py [--clients confluent,kafka-python,aiokafka,java]
        [--count 1000000] [--size 64] [--repeats 3] [--bootstrap-servers HOST:PORT]

One embedded broker (or --bootstrap-servers). For each client, kafkabench's delivery lab (async-close, acks=1,
client defaults otherwise, in process through the lab API: the worker keeps each message's answer in its mapped
history) and the client's minimal hand-written loop (benchmarks/minimal_<client>_delivery.py, no kafkabench
code: each message an id, and what became of it kept per message; Java's, MinimalJavaDelivery.java, compiled
here against the cached Kafka jars and run with the worker's JVM flags) take turns on fresh 4-partition topics: one
discarded pass of each, then --repeats in ABBA order. messages/s: kafkabench = count / its stopwatch (first send
-> flush returned, the seed's ms per event); the loop = count / (first send -> flush returned). --count is
confluent's and java's; the pure-Python clients send a tenth of it (a few seconds each). Prints each repeat, the medians
and the ratio kafkabench / minimal (median of the per-repeat ratios); target >= 0.90.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import statistics
import subprocess
import sys
import tempfile
import uuid
from pathlib import Path

from kafkabench.admin import KafkaAdmin
from kafkabench.cluster.target import Target
from kafkabench.core.events import SILENT
from kafkabench.labs.delivery.run import run_delivery
from kafkabench.labs.delivery.scenario import DeliveryScenario

from harness import java_loop_command, open_target

HERE = Path(__file__).parent
TARGET = 0.90
PARTITIONS = 4


def kafkabench_rate(target: Target, client: str, count: int, size: int, work: Path) -> float:
    scenario = DeliveryScenario(clients=[client], modes=["async-close"], acks=["1"], replication_factors=[1],
                                partitions=PARTITIONS, count=count, size=size)
    run = run_delivery(scenario, target, work / uuid.uuid4().hex[:8], SILENT).runs[0]
    assert run.counters["acknowledged"] == count and run.counters["lost"] == 0, run.counters
    return 1000 / run.timings["ms_per_event"]


def minimal_command(client: str, work: Path) -> list[str]:
    if client != "java":
        return [sys.executable, str(HERE / f"minimal_{client.replace('-', '_')}_delivery.py")]
    return java_loop_command("MinimalJavaDelivery", work)


def minimal_rate(bootstrap: str, client: str, count: int, size: int, work: Path) -> float:
    topic = f"minimal-delivery-{uuid.uuid4().hex[:8]}"
    with KafkaAdmin(bootstrap) as admin:
        admin.create_topic(topic, PARTITIONS, 1)
        try:
            done = subprocess.run([*minimal_command(client, work), bootstrap, topic, str(size), str(count)],
                                  capture_output=True, text=True, check=True, timeout=600)
        finally:
            admin.delete_topic(topic)
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["records"] == count, report
    return count / report["seconds"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", default="confluent,kafka-python,aiokafka")
    parser.add_argument("--count", type=int, default=1_000_000)
    parser.add_argument("--size", type=int, default=64)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--bootstrap-servers")
    args = parser.parse_args()
    with contextlib.ExitStack() as stack:
        work = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="kafkabench-delivery-overhead-")))
        target = open_target(stack, args.bootstrap_servers, work)
        for client in args.clients.split(","):
            compare(client, target, args.count if client in ("confluent", "java") else args.count // 10, args, work)


def compare(client: str, target: Target, count: int, args, work: Path) -> None:
    sides = {"kafkabench": lambda: kafkabench_rate(target, client, count, args.size, work),
             "minimal": lambda: minimal_rate(target.bootstrap_servers, client, count, args.size, work)}
    for run in sides.values():  # discarded: broker JIT, page cache
        run()
    rates: dict[str, list[float]] = {name: [] for name in sides}
    for repeat in range(args.repeats):
        order = ["kafkabench", "minimal"] if repeat % 2 == 0 else ["minimal", "kafkabench"]
        for name in order:
            rates[name].append(sides[name]())
        print(f"{client} repeat {repeat + 1}: " + ", ".join(f"{name} {rates[name][-1]:,.0f} msg/s" for name in sides))
    ratio = statistics.median(ours / theirs for ours, theirs in zip(rates["kafkabench"], rates["minimal"]))
    print(f"{client} delivery, {count:,} x {args.size} B, acks=1: kafkabench {statistics.median(rates['kafkabench']):,.0f} "
          f"msg/s, minimal {statistics.median(rates['minimal']):,.0f} msg/s, ratio {ratio:.2f} "
          f"(target >= {TARGET:.2f}: {'met' if ratio >= TARGET else 'MISSED'})")


if __name__ == "__main__":
    main()

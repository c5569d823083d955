"""Does kafkabench's copier copy at the client's own speed? kafkabench's delivery_consumer worker in copy mode /
a minimal transactional copier loop, per client.

    .venv/bin/python benchmarks/copier_overhead.py [--clients confluent,java] [--count 200000] [--size 64]
        [--batch 500] [--repeats 3] [-X KEY=VALUE ...] [--bootstrap-servers HOST:PORT]

One embedded broker (or --bootstrap-servers). An input topic of 4 partitions is filled once with --count delivery
ids; then, for each client, kafkabench's copier (one worker, the one the delivery lab's --copier runs, started by the
same launcher, in a group of its own) and the client's minimal loop (benchmarks/minimal_confluent_copier.py,
MinimalJavaCopier.java: no kafkabench code) take turns copying the whole input to a fresh output topic, in
transactions of up to --batch records with the offsets in them: one discarded pass of each, then --repeats in ABBA
order. -X: a producer setting both sides take (the client's own name: retry.backoff.ms is librdkafka's and Java's).
records/s = count / (the first poll that returned records -> the last commit returned), as each measures
itself. Prints each repeat, the medians and the ratio kafkabench / minimal (median of the per-repeat ratios);
target >= 0.90.
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
from kafkabench.core.protocol import DeliveryConsumerParams, Task, task_params

from harness import PARTITIONS, consumer_result, filled_topic, interleaved, java_loop_command, open_target

HERE = Path(__file__).parent
TARGET = 0.90
COPY_S = 600  # a copy that takes longer than this has hung


def kafkabench_rate(target: Target, client: str, source: str, count: int, batch: int, settings: dict) -> float:
    run = uuid.uuid4().hex[:8]
    output = f"copier-output-{run}"
    with KafkaAdmin(target.connection) as admin:
        admin.create_topic(output, PARTITIONS, 1)
    try:
        result = consumer_result(target, Task(
            scenario="delivery_consumer", client=client, bootstrap_servers=target.bootstrap_servers, topic=source,
            producer_config={**settings, "transactional.id": f"copier-{run}"}, timeout_s=60,
            params=task_params(DeliveryConsumerParams(mode="copy", group=f"copier-{run}", count=count, batch=batch,
                                                      output_topic=output))), count, COPY_S)
    finally:
        with KafkaAdmin(target.connection) as admin:
            admin.delete_topic(output)
    print(f"  kafkabench: {result.counters['commits']} transactions, {result.duration_s:.2f} s", flush=True)
    return count / result.duration_s


def minimal_command(client: str, work: Path) -> list[str]:
    if client != "java":
        return [sys.executable, str(HERE / "minimal_confluent_copier.py")]
    return java_loop_command("MinimalJavaCopier", work)


def minimal_rate(bootstrap: str, client: str, source: str, count: int, batch: int, settings: dict,
                 work: Path) -> float:
    run = uuid.uuid4().hex[:8]
    output = f"minimal-copier-output-{run}"
    with KafkaAdmin(bootstrap) as admin:
        admin.create_topic(output, PARTITIONS, 1)
        try:
            done = subprocess.run([*minimal_command(client, work), bootstrap, source, output, f"minimal-{run}",
                                   f"minimal-{run}", str(batch), str(count),
                                   *(f"{key}={value}" for key, value in settings.items())],
                                  capture_output=True, text=True, check=True, timeout=COPY_S)
        finally:
            admin.delete_topic(output)
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["records"] == count, report
    print(f"  minimal: {report['transactions']} transactions, {report['seconds']:.2f} s", flush=True)
    return count / report["seconds"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", default="confluent,java")
    parser.add_argument("--count", type=int, default=200_000)
    parser.add_argument("--size", type=int, default=64)
    parser.add_argument("--batch", type=int, default=500)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("-X", dest="settings", action="append", default=[], metavar="KEY=VALUE")
    parser.add_argument("--bootstrap-servers")
    args = parser.parse_args()
    args.settings = dict(item.split("=", 1) for item in args.settings)
    with contextlib.ExitStack() as stack:
        work = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="kafkabench-copier-overhead-")))
        target = open_target(stack, args.bootstrap_servers, work)
        source = stack.enter_context(filled_topic(target, "copier-input", args.count, args.size))
        for client in args.clients.split(","):
            compare(client, target, source, args, work)


def compare(client: str, target: Target, source: str, args, work: Path) -> None:
    sides = {"kafkabench": lambda: kafkabench_rate(target, client, source, args.count, args.batch, args.settings),
             "minimal": lambda: minimal_rate(target.bootstrap_servers, client, source, args.count, args.batch,
                                             args.settings, work)}
    rates, ratio = interleaved(client, sides, args.repeats)
    given = "".join(f", {key}={value}" for key, value in args.settings.items())
    print(f"{client} copier, {args.count:,} x {args.size} B in transactions of <= {args.batch}{given}: kafkabench "
          f"{statistics.median(rates['kafkabench']):,.0f} records/s, minimal {statistics.median(rates['minimal']):,.0f} "
          f"records/s, ratio {ratio:.2f} (target >= {TARGET:.2f}: {'met' if ratio >= TARGET else 'MISSED'})")


if __name__ == "__main__":
    main()

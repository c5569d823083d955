"""Does `kafkabench produce --topics T` write many topics at the client's own speed? kafkabench / a minimal loop.

    .venv/bin/python benchmarks/many_topics_overhead.py [--topics 100,1000] [--count 300000] [--size 100]
        [--repeats 3] [--bootstrap-servers HOST:PORT]

One embedded broker (or --bootstrap-servers). Per topic count, T topics of one partition are created once and both
sides write the same ones in the same pattern: kafkabench's confluent producer as fast as possible (through the lab
API, a batch of 256 records to each topic in turn) and the minimal hand-written loop
(benchmarks/minimal_confluent_produce_topics.py, 256 records to each topic in turn), acks=1 batch.size=1000000 linger.ms=5 on both. One discarded pass of each, then
--repeats interleaved repeats in ABBA order. records/s = acknowledged records / (first send -> last ack), both sides.
Prints each side's records/s per repeat and the ratio kafkabench / minimal (median of the per-repeat ratios) against
the target >= 0.90. (The pattern matters more than the harness: the minimal loop sending each record to the next
topic wrote 100 topics at 0.62x and 1,000 topics at 0.8x the rate of 256-record runs, fewer records per batch.)
"""

from __future__ import annotations

import argparse
import contextlib
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import uuid
from pathlib import Path

from kafkabench.admin import KafkaAdmin
from kafkabench.cluster import EmbeddedCluster
from kafkabench.cluster.target import Target
from kafkabench.config.properties import parse_overrides
from kafkabench.core.events import SILENT
from kafkabench.labs.throughput.run import run_throughput
from kafkabench.labs.throughput.scenario import ProduceScenario

HERE = Path(__file__).parent
PRODUCER = {"acks": "1", "batch.size": "1000000", "linger.ms": "5"}
TARGET = 0.90


def kafkabench_rate(target: Target, prefix: str, topics: int, size: int, count: int, work: Path,
                    extra: list[str]) -> float:
    settings = [f"{k}={v}" for k, v in PRODUCER.items() if k != "acks"] + extra
    scenario = ProduceScenario(topic=prefix, topics=topics, size=size, count=count, acks=PRODUCER["acks"],
                               client="confluent", overrides=parse_overrides(settings))
    out = work / uuid.uuid4().hex[:8]
    try:
        run = run_throughput(scenario, target, out, SILENT).runs[0]
    finally:
        shutil.rmtree(out, ignore_errors=True)
    return run.throughput["records_per_s"]


def minimal_rate(bootstrap: str, prefix: str, topics: int, size: int, count: int) -> float:
    command = [sys.executable, str(HERE / "minimal_confluent_produce_topics.py"), bootstrap, prefix, str(size),
               str(count), "--topics", str(topics), *(arg for k, v in PRODUCER.items() for arg in ("-X", f"{k}={v}"))]
    done = subprocess.run(command, capture_output=True, text=True, timeout=600, stdin=subprocess.DEVNULL, cwd=HERE)
    if done.returncode != 0:
        raise SystemExit(f"the minimal loop failed: {done.stderr.strip()[-400:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])["records_per_s"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--topics", default="100,1000")
    parser.add_argument("--count", type=int, default=300_000)
    parser.add_argument("--size", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--bootstrap-servers")
    parser.add_argument("-X", dest="extra", action="append", default=[], metavar="KEY=VALUE",
                        help="A setting for kafkabench's side only (e.g. librdkafka:statistics.interval.ms=600000).")
    args = parser.parse_args()
    counts = [int(t) for t in args.topics.split(",")]
    with tempfile.TemporaryDirectory(prefix="kafkabench-topics-") as tmp, contextlib.ExitStack() as stack:
        work = Path(tmp)
        if args.bootstrap_servers:
            target = Target.external(args.bootstrap_servers)
        else:
            target = Target.embedded(stack.enter_context(EmbeddedCluster(brokers=1, directory=work / "cluster")))
        print(f"broker: {target.bootstrap_servers}; {args.count:,} records of {args.size} B a run", flush=True)
        for topics in counts:
            prefix = f"many-{uuid.uuid4().hex[:6]}"
            with KafkaAdmin(target.connection, timeout_s=60) as admin:
                admin.create_topics([f"{prefix}-{i:04d}" for i in range(topics)], 1, 1)
            sides = {"kafkabench": lambda: kafkabench_rate(target, prefix, topics, args.size, args.count, work, args.extra),
                     "minimal": lambda: minimal_rate(target.bootstrap_servers, prefix, topics, args.size, args.count)}
            for side in sides.values():  # one discarded pass each: the broker's JIT, the topics' first batches
                side()
            rates: dict[str, list[float]] = {"kafkabench": [], "minimal": []}
            for repeat in range(args.repeats):
                order = ("kafkabench", "minimal") if repeat % 2 == 0 else ("minimal", "kafkabench")
                for name in order:
                    rates[name].append(sides[name]())
            ratio = statistics.median(a / b for a, b in zip(rates["kafkabench"], rates["minimal"]))
            print(f"{topics:>5} topics: kafkabench {', '.join(f'{r:,.0f}' for r in rates['kafkabench'])} records/s; "
                  f"minimal {', '.join(f'{r:,.0f}' for r in rates['minimal'])}; kafkabench / minimal {ratio:.2f} "
                  f"({'met' if ratio >= TARGET else 'MISSED'}, target >= {TARGET})", flush=True)
            with KafkaAdmin(target.connection, timeout_s=60) as admin:
                admin.delete_topics([f"{prefix}-{i:04d}" for i in range(topics)])


if __name__ == "__main__":
    main()

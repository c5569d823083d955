"""Does the harness add latency? kafkabench's `confluent` e2e p50 against a minimal hand-written loop.

    .venv/bin/python benchmarks/latency_overhead.py [--repeats 5] [--count 60] [--size 1302245]

One embedded broker, the same settings (acks=1, linger.ms=0, limits fitted to the payload), the two
measured in interleaved repeats in ABBA order after one discarded pass of each (the broker's JIT warms up),
each side's latencies pooled over its repeats. Target: kafkabench p50 / minimal p50 <= 1.10. Apache's EndToEndLatency (from
the cached jars, same size, count and acks) is run on the same broker and printed beside them; its
percentiles are whole milliseconds and it times the first message too.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import uuid
from pathlib import Path

from kafkabench.admin import KafkaAdmin
from kafkabench.cluster import EmbeddedCluster
from kafkabench.cluster.artifacts import JarCache
from kafkabench.cluster.java import find_java
from kafkabench.cluster.target import Target
from kafkabench.core.events import SILENT
from kafkabench.core.histogram import LatencyHistogram
from kafkabench.core.results import read_histogram
from kafkabench.labs.latency.scenario import LatencyScenario
from kafkabench.labs.latency.session import run_latency

HERE = Path(__file__).parent


def kafkabench_once(target: Target, size: int, count: int, out: Path) -> LatencyHistogram:
    scenario = LatencyScenario(size=size, count=count, warmup=10, rounds=1, clients=["confluent"])
    document = run_latency(scenario, target, out, SILENT)
    return read_histogram(out, document.runs[0], "e2e")


def minimal_once(bootstrap: str, size: int, count: int) -> LatencyHistogram:
    topic = f"minimal-{uuid.uuid4().hex[:8]}"
    with KafkaAdmin(bootstrap) as admin:
        admin.create_topic(topic, config={"max.message.bytes": str(size + 1024)})
        try:
            done = subprocess.run([sys.executable, str(HERE / "minimal_confluent_ping_pong.py"), bootstrap, topic, str(size), str(count), "10"],
                                  capture_output=True, text=True, timeout=600, check=True)
        finally:
            admin.delete_topic(topic)
    histogram = LatencyHistogram()
    for micros in json.loads(done.stdout):
        histogram.record_ns(micros * 1000)
    return histogram


def apache_end_to_end(bootstrap: str, size: int, count: int) -> str:
    java, jars = find_java(), JarCache().ensure()
    topic = f"apache-e2e-{uuid.uuid4().hex[:8]}"
    with KafkaAdmin(bootstrap) as admin, tempfile.NamedTemporaryFile("w", suffix=".properties") as props:
        admin.create_topic(topic, config={"max.message.bytes": str(size + 1024)})
        props.write(f"max.request.size={size + 1024}\nmax.partition.fetch.bytes={size + 1024}\n")
        props.flush()
        try:
            done = subprocess.run([str(java.executable), "-cp", os.pathsep.join(map(str, jars)), "org.apache.kafka.tools.EndToEndLatency",
                                   bootstrap, topic, str(count), "1", str(size), props.name],
                                  capture_output=True, text=True, timeout=600)
        finally:
            admin.delete_topic(topic)
    avg = re.search(r"Avg latency: ([\d.]+) ms", done.stdout)
    pct = re.search(r"Percentiles: 50th = (\d+), 99th = (\d+), 99.9th = (\d+)", done.stdout)
    if not (avg and pct):
        return f"EndToEndLatency failed: {(done.stdout + done.stderr).strip()[-300:]}"
    return f"avg {float(avg.group(1)):.2f}  p50 {pct.group(1)}  p99 {pct.group(2)}  p99.9 {pct.group(3)}  (whole ms, first message included)"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--count", type=int, default=60)
    parser.add_argument("--size", type=int, default=1_302_245)
    args = parser.parse_args()
    ours, minimal = LatencyHistogram(), LatencyHistogram()
    ours_p50s, minimal_p50s = [], []
    with tempfile.TemporaryDirectory(prefix="kafkabench-overhead-") as tmp, EmbeddedCluster(brokers=1, directory=Path(tmp) / "cluster") as cluster:
        target = Target.embedded(cluster)
        # a freshly started broker JVM is still compiling its hot paths: one discarded pass of each first
        kafkabench_once(target, args.size, args.count, Path(tmp) / "warm-up")
        minimal_once(cluster.bootstrap_servers, args.size, args.count)
        for repeat in range(args.repeats):
            # ABBA order, so neither side always runs right after the other
            if repeat % 2 == 0:
                a = kafkabench_once(target, args.size, args.count, Path(tmp) / f"run-{repeat}")
                b = minimal_once(cluster.bootstrap_servers, args.size, args.count)
            else:
                b = minimal_once(cluster.bootstrap_servers, args.size, args.count)
                a = kafkabench_once(target, args.size, args.count, Path(tmp) / f"run-{repeat}")
            ours.merge(a)
            minimal.merge(b)
            ours_p50s.append(a.summary().p50_ms)
            minimal_p50s.append(b.summary().p50_ms)
            print(f"repeat {repeat + 1}/{args.repeats}: kafkabench p50 {ours_p50s[-1]:.2f} ms, minimal p50 {minimal_p50s[-1]:.2f} ms", flush=True)
        apache = apache_end_to_end(cluster.bootstrap_servers, args.size, args.count * args.repeats)
    o, m = ours.summary(), minimal.summary()
    print()
    print(f"e2e of a {args.size}-byte value, acks=1, {args.repeats} interleaved repeats x {args.count} messages, ms")
    print(f"{'':26}{'count':>6}{'p50':>8}{'p90':>8}{'p99':>8}{'max':>8}")
    for name, s in (("kafkabench confluent", o), ("minimal confluent loop", m)):
        print(f"{name:26}{s.count:>6}{s.p50_ms:>8.2f}{s.p90_ms:>8.2f}{s.p99_ms:>8.2f}{s.max_ms:>8.2f}")
    print(f"{'Apache EndToEndLatency':26}{apache}")
    print(f"\nratio kafkabench / minimal, pooled p50: {o.p50_ms / m.p50_ms:.3f}  (median of per-repeat ratios: "
          f"{statistics.median(a / b for a, b in zip(ours_p50s, minimal_p50s)):.3f}; target <= 1.10)")


if __name__ == "__main__":
    main()

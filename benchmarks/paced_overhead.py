"""Does kafkabench's paced (open-loop) producer report what the client does at a fixed rate? kafkabench / a minimal loop.

    .venv/bin/python benchmarks/paced_overhead.py [--clients confluent,java] [--rates 1000,10000] [--size 1000]
        [--seconds 10] [--repeats 3] [--bootstrap-servers HOST:PORT]

The capacity lab, `produce --rate` and `tune` all stand on the paced producer: its publish latency and its CPU
must be the client's, not the cost of our waiting. One embedded broker (or --bootstrap-servers). For each
client and rate, kafkabench (in process, through the lab API, no consumer) and a minimal hand-written paced
loop of that client (benchmarks/minimal_confluent_paced.py, MinimalJavaPaced.java: no kafkabench code, client
defaults on both sides) send rate x seconds records of --size random bytes to a fresh one-partition topic.
One discarded pass of each first, then --repeats interleaved repeats in ABBA order. Per case: each side's
publish latency p50 and p99, delay p99 (due -> send call) and process CPU seconds; the ratios kafkabench /
minimal are medians of the per-repeat ratios. Targets: publish p50 and CPU within 0.95 .. 1.05 and <= 1.2.
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
from kafkabench.labs.throughput.run import run_throughput
from kafkabench.labs.throughput.scenario import ProduceScenario

from harness import java_loop_command, open_target

HERE = Path(__file__).parent
P50_RANGE, CPU_MAX = (0.95, 1.05), 1.2
FIGURES = ("p50", "p99", "delay_p99", "cpu_s")


def kafkabench_side(target: Target, client: str, size: int, count: int, rate: float, work: Path) -> dict:
    scenario = ProduceScenario(client=client, size=size, count=count, rate=rate, consumers=0)
    run = run_throughput(scenario, target, work / uuid.uuid4().hex[:8], SILENT).runs[0]
    assert not run.error and run.counters["acked"] == count, (run.error, run.counters)
    latency, delay = run.stats["publish_latency"], run.stats["publish_delay"]
    return {"p50": latency.p50_ms, "p99": latency.p99_ms, "delay_p99": delay.p99_ms, "cpu_s": run.resources["cpu_s"]}


def minimal_command(client: str, work: Path) -> list[str]:
    if client == "confluent":
        return [sys.executable, str(HERE / "minimal_confluent_paced.py")]
    return java_loop_command("MinimalJavaPaced", work)


def minimal_side(bootstrap: str, client: str, size: int, count: int, rate: float, work: Path) -> dict:
    topic = f"minimal-paced-{uuid.uuid4().hex[:8]}"
    with KafkaAdmin(bootstrap) as admin:
        admin.create_topic(topic, 1, 1)
        try:
            done = subprocess.run([*minimal_command(client, work), bootstrap, topic, str(size), str(count), str(rate)],
                                  capture_output=True, text=True, check=True, timeout=600)
        finally:
            admin.delete_topic(topic)
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["records"] == count and not report["errors"], report
    return {"p50": report["latency_us"]["p50"] / 1e3, "p99": report["latency_us"]["p99"] / 1e3,
            "delay_p99": report["delay_us"]["p99"] / 1e3, "cpu_s": report["cpu_s"]}


def compare(client: str, rate: float, target: Target, args, work: Path) -> str:
    count = int(rate * args.seconds)
    sides = {"kafkabench": lambda: kafkabench_side(target, client, args.size, count, rate, work),
             "minimal": lambda: minimal_side(target.bootstrap_servers, client, args.size, count, rate, work)}
    for run in sides.values():  # discarded: broker JIT, page cache
        run()
    figures: dict[str, list[dict]] = {name: [] for name in sides}
    for repeat in range(args.repeats):
        for name in (sides if repeat % 2 == 0 else reversed(list(sides))):
            figures[name].append(sides[name]())
        print(f"{client} {rate:,.0f}/s repeat {repeat + 1}: " + "; ".join(
            f"{name} " + ", ".join(f"{k} {v:.3g}" for k, v in figures[name][-1].items()) for name in sides), flush=True)
    ratio = {k: statistics.median(ours[k] / theirs[k] for ours, theirs in zip(figures["kafkabench"], figures["minimal"]))
             for k in FIGURES}
    median = {name: {k: statistics.median(f[k] for f in runs) for k in FIGURES} for name, runs in figures.items()}
    met = P50_RANGE[0] <= ratio["p50"] <= P50_RANGE[1] and ratio["cpu_s"] <= CPU_MAX
    return (f"| {client} | {rate:,.0f} | " + " | ".join(
        f"{median['kafkabench'][k]:.3g} / {median['minimal'][k]:.3g} ({ratio[k]:.2f})" for k in FIGURES)
        + f" | {'met' if met else 'MISSED'} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", default="confluent,java")
    parser.add_argument("--rates", default="1000,10000")
    parser.add_argument("--size", type=int, default=1000)
    parser.add_argument("--seconds", type=float, default=10)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--bootstrap-servers")
    args = parser.parse_args()
    rows = []
    with contextlib.ExitStack() as stack:
        work = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="kafkabench-paced-")))
        target = open_target(stack, args.bootstrap_servers, work)
        for client in args.clients.split(","):
            for rate in (float(r) for r in args.rates.split(",")):
                rows.append(compare(client, rate, target, args, work))
    print(f"\n{args.size} B records, {args.seconds:g} s per run, medians of {args.repeats} repeats; "
          "kafkabench / minimal (ratio); latencies in ms")
    print("| client | records/s | publish p50 | publish p99 | delay p99 | CPU s | target |\n|---|---:|---:|---:|---:|---:|---|")
    print("\n".join(rows))
    print(f"targets: publish p50 ratio {P50_RANGE[0]:.2f} .. {P50_RANGE[1]:.2f}, CPU ratio <= {CPU_MAX:.1f}")


if __name__ == "__main__":
    main()

"""kafkabench's durability cells against Apache's ProducerPerformance: records/s ratios on 3 brokers.

    .venv/bin/python benchmarks/durability_overhead.py [--count 100000] [--repeats 3] [--alone] [--wall]

One embedded cluster of 3 brokers and 1 controller, stopped at the end; the seed's three topics (yolo,
throughput-rf3, durable: the lab's `--preset seed`), the Java client, idempotence off. Every repeat runs both
sides, which one goes first rotating every repeat:

- kafkabench: the lab itself, `run_durability` with one repeat of the three cells (fresh topic, warm-up, the
  produce run with one consumer alongside), without the availability probe;
- Apache: per cell, a fresh topic created as the lab creates it, the lab's warm-up of the topic (in a worker of
  its own: ProducerPerformance's JVM starts cold, as it does for any user), then ProducerPerformance with the same records, size, rate and the producer settings kafkabench's Java worker got
  (labs/durability/apache.py, the code behind `--compare-apache`).

Prints each topic's median records/s of both and kafkabench / Apache (target >= 1.0). The jobs differ in one
respect on purpose, since kafkabench's side is the lab's own cell: a consumer reads alongside it, on the same
brokers and cores, while ProducerPerformance produces alone. `--alone` adds a third side, rotated with the
others: the cell's produce run without its consumer (the throughput lab's run on a fresh topic, after the
warm-up), to tell how much of the gap is that consumer.

`--wall`: afterwards, with the cluster stopped, the wall time of `kafkabench run seed-003` (its own cluster
included) against the 5-minute target; `--repeats 0 --wall` times only that.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

from kafkabench.admin import KafkaAdmin
from kafkabench.cluster import EmbeddedCluster
from kafkabench.cluster.target import Target
from kafkabench.core.events import SILENT
from kafkabench.labs.durability import apache as durability_apache
from kafkabench.labs.durability.cells import expand, run_order
from kafkabench.labs.durability.run import cell_produce, run_durability, separate_warmup
from kafkabench.labs.durability.scenario import DurabilityScenario
from kafkabench.labs.throughput.run import run_throughput

WALL_TARGET_S = 300
SIDES = ("kafkabench", "apache")


def seed_scenario(count: int, repeat: int) -> DurabilityScenario:
    return DurabilityScenario(preset="seed", clients=["java"], repeats=1, count=count, availability=False, seed=repeat)


def kafkabench_side(scenario: DurabilityScenario, target: Target, out: Path) -> dict[str, float]:
    document = run_durability(scenario, target, out, SILENT)
    failed = [f"{run.params.get('cell')}: {run.error}" for run in document.runs if run.error] + document.notes
    if failed:
        raise SystemExit(f"kafkabench's durability run failed: {'; '.join(failed)}")
    return {run.params["name"]: run.throughput["records_per_s"] for run in document.runs if run.scenario == "produce"}


def fresh_topic_side(side: str, scenario: DurabilityScenario, target: Target, out: Path, repeat: int) -> dict[str, float]:
    """Apache's tool (or, `alone`, kafkabench's produce run of the cell without its consumer) per cell, each on
    a fresh topic created as the lab creates it, after the lab's warm-up."""
    rates = {}
    for cell in run_order(expand(scenario), 0, scenario.order, repeat):  # the order the lab's side used
        topic = f"bench-durability-{side}-{uuid.uuid4().hex[:8]}"
        with KafkaAdmin(target.bootstrap_servers, timeout_s=scenario.timeout) as admin:
            admin.create_topic(topic, cell.partitions, cell.replication_factor, cell.topic_settings())
            try:
                produce = cell_produce(cell, scenario, topic)
                run_throughput(separate_warmup(produce, scenario.warmup), target, out / f"warmup-{cell.name}", SILENT)
                if side == "apache":
                    run = durability_apache.producer_performance_run(cell, produce, [], target)
                else:
                    alone = produce.model_copy(update={"consumers": 0})
                    run = run_throughput(alone, target, out / f"alone-{cell.name}", SILENT).runs[0]
            finally:
                admin.delete_topic(topic)
        if run.error:
            raise SystemExit(f"{cell.label}: {run.error}")
        rates[cell.name] = run.throughput["records_per_s"]
    return rates


def ratios(args: argparse.Namespace) -> None:
    sides = SIDES + (("alone",) if args.alone else ())
    measured: dict[str, dict[str, list[float]]] = {side: {} for side in sides}
    with tempfile.TemporaryDirectory(prefix="kafkabench-bench-") as tmp, \
            EmbeddedCluster(brokers=3, controllers=1, directory=Path(tmp) / "cluster") as cluster:
        target = Target.embedded(cluster)
        started = time.monotonic()
        # the brokers' JIT and page cache warm up on one unmeasured round of the lab's cells
        kafkabench_side(seed_scenario(min(args.count, 20_000), 99), target, Path(tmp) / "warm-up")
        for repeat in range(args.repeats):
            order = sides[repeat % len(sides):] + sides[:repeat % len(sides)]
            for side in order:
                scenario = seed_scenario(args.count, repeat)
                out = Path(tmp) / f"{repeat}-{side}"
                if side == "kafkabench":
                    rates = kafkabench_side(scenario, target, out)
                else:
                    rates = fresh_topic_side(side, scenario, target, out, repeat)
                for name, rate in rates.items():
                    measured[side].setdefault(name, []).append(rate)
                print(f"repeat {repeat + 1}/{args.repeats} {side:>10}: "
                      + "  ".join(f"{name} {rate:,.0f}" for name, rate in rates.items())
                      + f"  ({time.monotonic() - started:.0f} s)", flush=True)
    print(f"\nkafkabench durability cell (java client, one consumer alongside) / Apache ProducerPerformance, "
          f"records/s, median of {args.repeats} interleaved repeats, {args.count:,} records of 100 B")
    alone_head = f" {'alone':>11} {'alone/Apache':>12}" if args.alone else ""
    print(f"{'topic':<15} {'kafkabench':>11} {'Apache':>11} {'ratio':>6}  target >= 1.0{alone_head}")
    for name in measured["kafkabench"]:
        ours, theirs = statistics.median(measured["kafkabench"][name]), statistics.median(measured["apache"][name])
        alone = statistics.median(measured["alone"][name]) if args.alone else None
        alone_cells = f" {alone:>11,.0f} {alone / theirs:>12.2f}" if alone else ""
        print(f"{name:<15} {ours:>11,.0f} {theirs:>11,.0f} {ours / theirs:>6.2f}  "
              f"{'PASS' if ours >= theirs else 'MISS':<13}{alone_cells}".rstrip())


def wall() -> None:
    kafkabench = Path(sys.executable).parent / "kafkabench"
    with tempfile.TemporaryDirectory(prefix="kafkabench-wall-") as tmp:
        command = [str(kafkabench), "run", "seed-003", "--out", str(Path(tmp) / "run")]
        print(f"\n{' '.join(command)}", flush=True)
        started = time.monotonic_ns()
        done = subprocess.run(command, stdin=subprocess.DEVNULL, capture_output=True, text=True)
        seconds = (time.monotonic_ns() - started) / 1e9
    verdict = "FAILED, no time to compare" if done.returncode else "PASS" if seconds <= WALL_TARGET_S else "MISS"
    print(f"wall time {seconds:.0f} s (target <= {WALL_TARGET_S} s), exit {done.returncode}: {verdict}")
    if done.returncode != 0:
        print((done.stderr.strip() or done.stdout.strip() or "no output").splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=100_000, help="records per cell and run")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--alone", action="store_true",
                        help="also kafkabench's produce run of each cell without the consumer: how much of the gap it is")
    parser.add_argument("--wall", action="store_true", help="also time `kafkabench run seed-003`")
    args = parser.parse_args()
    if args.repeats > 0:
        ratios(args)
    if args.wall:
        wall()


if __name__ == "__main__":
    main()

"""What the isolated network costs: produce 100 B records on a one-broker cluster whose broker runs in a network
namespace of its own (reached through a veth and a bridge) against one on loopback, in the same run; and how long
each takes to start.

    sudo .venv/bin/python benchmarks/isolated_network.py [--rounds 5] [--count 2000000] [--client confluent]

Both clusters run at once; the produce runs alternate between them round by round (loopback, isolated, loopback,
...), so machine drift hits both alike. Prints each side's median records/s and their ratio (the aim: isolated >=
0.95 of loopback; each round's own ratio too, since drift between rounds is larger than the difference) and the
start times (storage format, JVM start, readiness probe; the isolated one also makes
its namespace, bridge and veth and checks the routes).
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

from kafkabench.cluster import EmbeddedCluster
from kafkabench.cluster.target import Target
from kafkabench.core.events import SILENT
from kafkabench.labs.throughput.run import run_throughput
from kafkabench.labs.throughput.scenario import ProduceScenario

NETWORKS = ("loopback", "isolated")


def produce(target: Target, client: str, count: int, out: Path) -> float:
    scenario = ProduceScenario(client=client, size=100, count=count)
    return run_throughput(scenario, target, out, SILENT).runs[0].throughput["records_per_s"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--count", type=int, default=2_000_000)
    parser.add_argument("--client", default="confluent")
    args = parser.parse_args()
    if os.geteuid() != 0:
        raise SystemExit("the isolated network needs root: sudo .venv/bin/python benchmarks/isolated_network.py")
    rates: dict[str, list[float]] = {network: [] for network in NETWORKS}
    started: dict[str, float] = {}
    with tempfile.TemporaryDirectory(prefix="kafkabench-isolated-") as work:
        clusters = {}
        try:
            for network in NETWORKS:
                begun = time.perf_counter()
                clusters[network] = EmbeddedCluster(directory=Path(work) / network, network=network).start()
                started[network] = time.perf_counter() - begun
            for round_ in range(args.rounds):
                for network in NETWORKS:
                    out = Path(work) / f"{network}-{round_}"
                    rates[network].append(produce(Target.embedded(clusters[network]), args.client, args.count, out))
                print(f"round {round_ + 1}/{args.rounds}: " + ", ".join(
                    f"{network} {rates[network][-1]:,.0f} records/s" for network in NETWORKS), flush=True)
        finally:
            for cluster in clusters.values():
                cluster.stop()
    loopback, isolated = (statistics.median(rates[network]) for network in NETWORKS)
    print(f"\n{args.client}, 100 B, {args.count:,} records a run, {args.rounds} interleaved rounds, {os.cpu_count()} cores")
    for network in NETWORKS:
        print(f"  {network:>8}: median {statistics.median(rates[network]):>11,.0f} records/s "
              f"(range {min(rates[network]):,.0f}-{max(rates[network]):,.0f}), started in {started[network]:.1f} s")
    paired = [i / lo for i, lo in zip(rates["isolated"], rates["loopback"])]
    print(f"  isolated / loopback: {isolated / loopback:.3f} of the medians, {statistics.median(paired):.3f} the median "
          f"of the rounds' own ratios (range {min(paired):.3f}-{max(paired):.3f}); aim >= 0.95")


if __name__ == "__main__":
    main()

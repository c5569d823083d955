"""Do workers on Ray sustain what the same workers do locally, and what does starting them on Ray cost?

    .venv/bin/python benchmarks/ray_scaling.py [--nodes 1,2,3] [--rounds 2] [--duration 10] [--bootstrap-servers H:P]

A Ray cluster of a head and 3 nodes on this machine (on_ray.local_cluster), each node's processes pinned to one
core (node i to core i modulo the cores there are); the same number of local workers, each pinned the same way.
For 1, 2 and 3 workers: producers as fast as they go (1 KB records, one partition per producer, --duration s),
Ray and local interleaved, `--rounds` times. Figures: the aggregate records/s of each (median over rounds), their
ratio Ray/local (target >= 0.97), and the wall time of a whole run on each: the difference is what starting on
Ray costs (actors, placement, clocks, files).
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import psutil

sys.path.insert(0, str(Path(__file__).parent))
from harness import open_target  # noqa: E402

from kafkabench.core.events import Listener  # noqa: E402
from kafkabench.core.launcher import LOCAL_WORKERS, Launcher  # noqa: E402
from kafkabench.labs.throughput.run import run_throughput  # noqa: E402
from kafkabench.labs.throughput.scenario import ProduceScenario  # noqa: E402
from kafkabench.on_ray.local_cluster import LocalRayCluster  # noqa: E402

CORES = sorted(os.sched_getaffinity(0))


def pin_tree(pid: int, core: int) -> None:
    """A process and everything it started so far on one core (what it starts later inherits it)."""
    process = psutil.Process(pid)
    for each in [process, *process.children(recursive=True)]:
        with contextlib.suppress(psutil.NoSuchProcess):
            each.cpu_affinity([core])


class PinnedLocal:
    """The local launcher, worker i pinned to core i modulo the cores."""

    name, pairs_by_node = "local", False

    def __init__(self) -> None:
        self.started = 0

    def reserve(self, count: int) -> None:
        self.started = 0

    def start(self, name: str, client: str):
        worker = LOCAL_WORKERS.start(name, client)
        pin_tree(worker.pid, CORES[self.started % len(CORES)])
        self.started += 1
        return worker

    def share(self, path: Path) -> str:
        return LOCAL_WORKERS.share(path)

    def collect(self, path: Path) -> None:
        pass


def measure(target, launcher, producers: int, duration: float, out: Path) -> tuple[float, float]:
    """(records/s, wall seconds of the whole run)"""
    scenario = ProduceScenario(size=1000, producers=producers, partitions=producers, duration=duration, interval=1)
    started = time.monotonic()
    document = run_throughput(scenario, dataclasses.replace(target, launcher=launcher), out, Listener())
    return document.runs[0].throughput["records_per_s"], time.monotonic() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", default="1,2,3")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--duration", type=float, default=10)
    parser.add_argument("--bootstrap-servers")
    args = parser.parse_args()
    counts = [int(n) for n in args.nodes.split(",")]
    rows = []
    with tempfile.TemporaryDirectory(prefix="ray-scaling-") as work, contextlib.ExitStack() as stack:
        work = Path(work)
        target = open_target(stack, args.bootstrap_servers, work)
        cluster = stack.enter_context(LocalRayCluster(nodes=max(counts), directory=work / "ray"))
        for index, process in enumerate(p for p in cluster.processes if p.role.startswith("node")):
            pin_tree(process.pid, CORES[index % len(CORES)])
        print(f"broker {target.bootstrap_servers}; Ray {cluster.address}: {max(counts)} nodes pinned to cores "
              f"{[CORES[i % len(CORES)] for i in range(max(counts))]}", flush=True)
        for count in counts:
            figures: dict[str, list[tuple[float, float]]] = {"ray": [], "local": []}
            for round_ in range(args.rounds):
                for kind in ("ray", "local") if round_ % 2 == 0 else ("local", "ray"):
                    out = work / f"{count}-{kind}-{round_}"
                    if kind == "ray":
                        with Launcher("ray", cluster.address).open() as launcher:
                            figures[kind].append(measure(target, launcher, count, args.duration, out))
                    else:
                        figures[kind].append(measure(target, PinnedLocal(), count, args.duration, out))
                    print(f"  {count} worker(s), {kind}: {figures[kind][-1][0]:,.0f} records/s, "
                          f"{figures[kind][-1][1]:.1f} s", flush=True)
            rate = {kind: statistics.median(r for r, _ in runs) for kind, runs in figures.items()}
            wall = {kind: statistics.median(w for _, w in runs) for kind, runs in figures.items()}
            rows.append((count, rate["ray"], rate["local"], rate["ray"] / rate["local"], wall["ray"] - wall["local"]))
    print(f"\n{'workers':>8} {'ray rec/s':>12} {'local rec/s':>12} {'ray/local':>10} {'start cost s':>13}  target >= 0.97")
    for count, ray_rate, local_rate, ratio, cost in rows:
        print(f"{count:>8} {ray_rate:>12,.0f} {local_rate:>12,.0f} {ratio:>10.3f} {cost:>13.1f}  "
              f"{'PASS' if ratio >= 0.97 else 'MISS'}")


if __name__ == "__main__":
    main()

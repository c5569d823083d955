"""How long `kafkabench cluster up` takes until the cluster is ready, for 1 and 3 brokers.

    .venv/bin/python benchmarks/cluster_startup.py [--runs 5]

Jars are fetched once before timing. Each run is the real CLI in a fresh process (what a user waits
for: interpreter start, Java discovery, storage format, JVM start, readiness probe), 1- and 3-broker runs
interleaved so machine drift hits both alike. Also times `cluster down`. Prints medians against the aims
(1 broker <= 15 s, 3 brokers <= 30 s) as ratios: below 1.0 meets the aim.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

from kafkabench.cluster.artifacts import JarCache

AIM_S = {1: 15.0, 3: 30.0}


def timed(args: list[str], env: dict) -> float:
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "kafkabench", *args], env=env, capture_output=True, text=True, timeout=300)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"`kafkabench {' '.join(args)}` failed: {done.stderr.strip()}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    runs = parser.parse_args().runs
    JarCache().ensure()
    up: dict[int, list[float]] = {1: [], 3: []}
    down: dict[int, list[float]] = {1: [], 3: []}
    with tempfile.TemporaryDirectory(prefix="kafkabench-startup-") as directory:
        env = {**os.environ, "KAFKABENCH_CLUSTER_DIR": directory}
        for run in range(runs):
            for brokers in (1, 3):
                up[brokers].append(timed(["cluster", "up", "--brokers", str(brokers)], env))
                down[brokers].append(timed(["cluster", "down"], env))
                print(f"run {run + 1}/{runs}: {brokers} broker(s) up {up[brokers][-1]:.1f} s, down {down[brokers][-1]:.1f} s", flush=True)
    print()
    print(f"{'brokers':>7}  {'up median':>9}  {'min':>5}  {'max':>5}  {'aim':>5}  {'median/aim':>10}  {'down median':>11}")
    for brokers in (1, 3):
        median = statistics.median(up[brokers])
        print(f"{brokers:>7}  {median:>8.1f}s  {min(up[brokers]):>4.1f}s  {max(up[brokers]):>4.1f}s  {AIM_S[brokers]:>4.0f}s"
              f"  {median / AIM_S[brokers]:>10.2f}  {statistics.median(down[brokers]):>10.1f}s")
    print(f"\n{os.cpu_count()} cores; {runs} interleaved runs per size; times include the CLI's own start-up")


if __name__ == "__main__":
    main()

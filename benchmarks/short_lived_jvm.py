"""What the brokers' JIT costs a short-lived cluster: 3 brokers with kafkabench's JVM options against the same with
SHORT_LIVED_JVM_OPTIONS (C1 only), the test suite's.

    .venv/bin/python benchmarks/short_lived_jvm.py [--rounds 3] [--seconds 20] [--rate 5000]

Each round starts a 3-broker cluster of each kind in turn (interleaved, so machine drift hits both alike), records the
brokers' CPU to be ready, runs `kafkabench produce` for --seconds at --rate records/s of 1,000 bytes (RF 3, one
consumer) and records the brokers' CPU over that run and its publish latency. Printed: medians per kind and the
ratios short-lived / default (below 1.0: the short-lived JVMs need less).
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from kafkabench.cluster import EmbeddedCluster
from kafkabench.cluster.embedded import SHORT_LIVED_JVM_OPTIONS
from harness import brokers_cpu_s, print_medians, produce_on

KINDS = {"default": (), "short-lived": SHORT_LIVED_JVM_OPTIONS}
FIGURES = ("ready s", "start cpu s", "run cpu s", "publish p50 ms", "publish p99 ms")


def one(options: tuple[str, ...], seconds: float, rate: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory(prefix="kafkabench-jit-") as name, \
            EmbeddedCluster(brokers=3, directory=Path(name) / "cluster", jvm_options=options) as cluster:
        return {"ready s": cluster.state.startup["write accepted"], "start cpu s": brokers_cpu_s(cluster),
                **produce_on(cluster, Path(name) / "out", seconds, rate)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=20)
    parser.add_argument("--rate", type=int, default=5000)
    options = parser.parse_args()
    results: dict[str, list[dict[str, float]]] = {kind: [] for kind in KINDS}
    for round_ in range(options.rounds):
        for kind, jvm in KINDS.items():
            results[kind].append(one(jvm, options.seconds, options.rate))
            print(f"round {round_ + 1}/{options.rounds} {kind:>11}: " +
                  ", ".join(f"{figure} {results[kind][-1][figure]:.2f}" for figure in FIGURES), flush=True)
    print_medians(results, FIGURES, "short-lived", "default")
    print(f"\nmedians of {options.rounds} interleaved rounds; short-lived: {' '.join(SHORT_LIVED_JVM_OPTIONS)}")


if __name__ == "__main__":
    main()

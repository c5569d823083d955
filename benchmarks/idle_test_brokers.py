"""What a test's cluster costs while it waits for the next test: two 3-broker + 1 controller clusters with the test
suite's settings, side by side, one of them also with QUIET_IDLE (fewer request threads, a no-op metadata record
every 5 s rather than every 0.5 s), both measured over the same window.

    .venv/bin/python benchmarks/idle_test_brokers.py [--rounds 3] [--idle 40] [--seconds 15] [--rate 5000]

Each round starts both clusters (which one first alternates), measures both clusters' CPU over the same --idle
seconds starting 3 s after both are ready (a test cluster's first minute, when most of them are used), then runs
`kafkabench produce` for --seconds at --rate records/s of 1,000 bytes (RF 3, one consumer) on each in turn and
records its brokers' CPU and publish latency. Printed: medians per kind and the ratios quiet / suite (below 1.0:
the quiet brokers need less).
"""

from __future__ import annotations

import argparse
import contextlib
import tempfile
import time
from pathlib import Path

from kafkabench.cluster import EmbeddedCluster
from kafkabench.cluster.embedded import FAST_FAILOVER, QUIET_IDLE, SHORT_LIVED_JVM_OPTIONS, SMALL_INTERNAL_TOPICS
from harness import brokers_cpu_s, print_medians, produce_on

KINDS = {"suite": {}, "quiet": QUIET_IDLE}
FIGURES = ("idle cpu %", "run cpu s", "publish p50 ms", "publish p99 ms")


def one_round(order: list[str], idle_s: float, seconds: float, rate: int) -> dict[str, dict[str, float]]:
    with tempfile.TemporaryDirectory(prefix="kafkabench-idle-") as name, contextlib.ExitStack() as stack:
        clusters = {kind: stack.enter_context(EmbeddedCluster(
            brokers=3, controllers=1, directory=Path(name) / kind, jvm_options=SHORT_LIVED_JVM_OPTIONS,
            broker_config_overrides={**FAST_FAILOVER, **SMALL_INTERNAL_TOPICS, **KINDS[kind]})) for kind in order}
        time.sleep(3)
        before = {kind: brokers_cpu_s(cluster) for kind, cluster in clusters.items()}
        time.sleep(idle_s)
        figures = {kind: {"idle cpu %": 100 * (brokers_cpu_s(cluster) - before[kind]) / idle_s}
                   for kind, cluster in clusters.items()}
        for kind in order:
            figures[kind].update(produce_on(clusters[kind], Path(name) / f"out-{kind}", seconds, rate))
        return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--idle", type=float, default=40)
    parser.add_argument("--seconds", type=float, default=15)
    parser.add_argument("--rate", type=int, default=5000)
    options = parser.parse_args()
    results: dict[str, list[dict[str, float]]] = {kind: [] for kind in KINDS}
    for round_ in range(options.rounds):
        order = list(KINDS) if round_ % 2 == 0 else list(reversed(KINDS))
        for kind, figures in one_round(order, options.idle, options.seconds, options.rate).items():
            results[kind].append(figures)
            print(f"round {round_ + 1}/{options.rounds} {kind:>7}: " +
                  ", ".join(f"{figure} {figures[figure]:.2f}" for figure in FIGURES), flush=True)
    print_medians(results, FIGURES, "quiet", "suite")
    print(f"\nmedians of {options.rounds} rounds, 4 nodes each (idle cpu %: of one core); quiet: {QUIET_IDLE}")


if __name__ == "__main__":
    main()

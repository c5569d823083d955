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
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil

from kafkabench.cluster import EmbeddedCluster
from kafkabench.cluster.embedded import FAST_FAILOVER, QUIET_IDLE, SHORT_LIVED_JVM_OPTIONS, SMALL_INTERNAL_TOPICS

KINDS = {"suite": {}, "quiet": QUIET_IDLE}
FIGURES = ("idle cpu %", "run cpu s", "publish p50 ms", "publish p99 ms")


def cpu_s(processes: list[psutil.Process]) -> float:
    return sum(p.cpu_times().user + p.cpu_times().system for p in processes)


def produce(cluster: EmbeddedCluster, out: Path, seconds: float, rate: int) -> dict[str, float]:
    brokers = [psutil.Process(node.pid) for node in cluster.state.nodes]
    started = cpu_s(brokers)
    done = subprocess.run([sys.executable, "-m", "kafkabench", "produce", "-b", cluster.bootstrap_servers,
                           "--rate", str(rate), "--duration", str(seconds), "--size", "1000",
                           "--replication-factor", "3", "--consumers", "1", "--out", str(out)],
                          capture_output=True, text=True, timeout=seconds * 10 + 120)
    if done.returncode != 0:
        raise SystemExit(f"kafkabench produce failed: {done.stderr.strip()[-400:]}")
    publish = json.loads((out / "result.json").read_text())["runs"][0]["stats"]["publish_latency"]
    return {"run cpu s": cpu_s(brokers) - started, "publish p50 ms": publish["p50_ms"],
            "publish p99 ms": publish["p99_ms"]}


def one_round(order: list[str], idle_s: float, seconds: float, rate: int) -> dict[str, dict[str, float]]:
    with tempfile.TemporaryDirectory(prefix="kafkabench-idle-") as name, contextlib.ExitStack() as stack:
        clusters = {kind: stack.enter_context(EmbeddedCluster(
            brokers=3, controllers=1, directory=Path(name) / kind, jvm_options=SHORT_LIVED_JVM_OPTIONS,
            broker_config_overrides={**FAST_FAILOVER, **SMALL_INTERNAL_TOPICS, **KINDS[kind]})) for kind in order}
        nodes = {kind: [psutil.Process(node.pid) for node in cluster.state.nodes] for kind, cluster in clusters.items()}
        time.sleep(3)
        before = {kind: cpu_s(processes) for kind, processes in nodes.items()}
        time.sleep(idle_s)
        figures = {kind: {"idle cpu %": 100 * (cpu_s(processes) - before[kind]) / idle_s}
                   for kind, processes in nodes.items()}
        for kind in order:
            figures[kind].update(produce(clusters[kind], Path(name) / f"out-{kind}", seconds, rate))
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
    medians = {kind: {f: statistics.median(r[f] for r in runs) for f in FIGURES} for kind, runs in results.items()}
    print(f"\n{'':>8}" + "".join(f"{figure:>16}" for figure in FIGURES))
    for kind in KINDS:
        print(f"{kind:>8}" + "".join(f"{medians[kind][f]:>16.2f}" for f in FIGURES))
    print(f"{'ratio':>8}" + "".join(f"{medians['quiet'][f] / medians['suite'][f]:>16.2f}" for f in FIGURES))
    print(f"\nmedians of {options.rounds} rounds, 4 nodes each (idle cpu %: of one core); quiet: {QUIET_IDLE}")


if __name__ == "__main__":
    main()

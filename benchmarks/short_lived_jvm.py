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
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import psutil

from kafkabench.cluster import EmbeddedCluster
from kafkabench.cluster.embedded import SHORT_LIVED_JVM_OPTIONS

KINDS = {"default": (), "short-lived": SHORT_LIVED_JVM_OPTIONS}
FIGURES = ("ready s", "start cpu s", "run cpu s", "publish p50 ms", "publish p99 ms")


def one(options: tuple[str, ...], seconds: float, rate: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory(prefix="kafkabench-jit-") as name, \
            EmbeddedCluster(brokers=3, directory=Path(name) / "cluster", jvm_options=options) as cluster:
        brokers = [psutil.Process(node.pid) for node in cluster.state.nodes]

        def cpu() -> float:
            return sum(p.cpu_times().user + p.cpu_times().system for p in brokers)

        started = cpu()
        done = subprocess.run([sys.executable, "-m", "kafkabench", "produce", "-b", cluster.bootstrap_servers,
                               "--rate", str(rate), "--duration", str(seconds), "--size", "1000",
                               "--replication-factor", "3", "--consumers", "1", "--out", f"{name}/out"],
                              capture_output=True, text=True, timeout=seconds * 10 + 120)
        if done.returncode != 0:
            raise SystemExit(f"kafkabench produce failed: {done.stderr.strip()[-400:]}")
        publish = json.loads(Path(f"{name}/out/result.json").read_text())["runs"][0]["stats"]["publish_latency"]
        return {"ready s": cluster.state.startup["write accepted"], "start cpu s": started, "run cpu s": cpu() - started,
                "publish p50 ms": publish["p50_ms"], "publish p99 ms": publish["p99_ms"]}


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
    medians = {kind: {f: statistics.median(r[f] for r in runs) for f in FIGURES} for kind, runs in results.items()}
    print(f"\n{'':>12}" + "".join(f"{figure:>16}" for figure in FIGURES))
    for kind in KINDS:
        print(f"{kind:>12}" + "".join(f"{medians[kind][f]:>16.2f}" for f in FIGURES))
    print(f"{'ratio':>12}" + "".join(f"{medians['short-lived'][f] / medians['default'][f]:>16.2f}" for f in FIGURES))
    print(f"\nmedians of {options.rounds} interleaved rounds; short-lived: {' '.join(SHORT_LIVED_JVM_OPTIONS)}")


if __name__ == "__main__":
    main()

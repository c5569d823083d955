"""What the Java worker's JVM costs a test: a run of test size with the measurement's JVM flags (workers/java_build
JVM_FLAGS: a 512 MB heap touched up front, C2) against the test suite's (KAFKABENCH_SHORT_LIVED_JVMS=1: C1 only,
nothing touched up front), side by side on one embedded broker.

    .venv/bin/python benchmarks/short_lived_worker.py [--rounds 5]

Each round runs, for each kind in turn (interleaved, so machine drift hits both alike), `kafkabench latency
--clients java` (20 pings of 1 KB after 2 warm-up ones) and `kafkabench produce --client java` (20,000 records of
100 B), and records the CPU of the command and everything it waited for (the worker JVMs among them)
and its wall time. Printed: medians per kind and the ratios short-lived / default (below 1.0: the short-lived JVMs
need less).
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from kafkabench.cluster import EmbeddedCluster
from kafkabench.cluster.embedded import SHORT_LIVED_JVM_OPTIONS
from kafkabench.core.environment import SHORT_LIVED_JVMS

KINDS = ("default", "short-lived")
COMMANDS = {
    "latency": ["latency", "--clients", "java", "--count", "20", "--warmup", "2", "--size", "1000", "--rounds", "1"],
    "produce": ["produce", "--client", "java", "--count", "20000", "--size", "100"],
}


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def one(kind: str, command: list[str], bootstrap: str, out: Path) -> tuple[float, float]:
    env = {key: value for key, value in os.environ.items() if key != SHORT_LIVED_JVMS}
    if kind == "short-lived":
        env[SHORT_LIVED_JVMS] = "1"
    before, began = children_cpu(), time.perf_counter()
    subprocess.run([sys.executable, "-m", "kafkabench", *command, "-b", bootstrap, "--out", str(out)], env=env,
                   check=True, capture_output=True, timeout=600, stdin=subprocess.DEVNULL)
    return children_cpu() - before, time.perf_counter() - began


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    figures: dict[tuple[str, str], list[tuple[float, float]]] = {}
    with tempfile.TemporaryDirectory(prefix="kafkabench-worker-jvm-") as name, EmbeddedCluster(
            brokers=1, directory=Path(name) / "cluster", jvm_options=SHORT_LIVED_JVM_OPTIONS) as cluster:
        for round_ in range(args.rounds):
            for what, command in COMMANDS.items():
                for kind in KINDS if round_ % 2 == 0 else KINDS[::-1]:
                    out = Path(name) / f"{what}-{kind}-{round_}"
                    figures.setdefault((what, kind), []).append(one(kind, command, cluster.bootstrap_servers, out))
    print(f"{args.rounds} rounds; CPU s of the command and its workers, wall s: medians")
    for what in COMMANDS:
        (cpu, wall), (short_cpu, short_wall) = ([statistics.median(f[i] for f in figures[(what, kind)]) for i in (0, 1)]
                                                for kind in KINDS)
        print(f"{what:8} default: {cpu:.2f} CPU s, {wall:.2f} s   short-lived: {short_cpu:.2f} CPU s, "
              f"{short_wall:.2f} s   ratio CPU {short_cpu / cpu:.2f}, wall {short_wall / wall:.2f}")


if __name__ == "__main__":
    main()

"""What an idle test cluster costs the machine: the CPU its nodes burn while nobody uses them, with the broker settings
a test suite's clusters get (`QUIET_WHEN_IDLE`) against Kafka's defaults. A suite keeps clusters between its tests
(a session's, a package's, the pytest plugin's), so on a 2-core machine running four test workers their idle cost is
paid all run long (aim: a ratio of at most 0.8).

    .venv/bin/python benchmarks/idle_cluster_cpu.py [--runs 3] [--brokers 3] [--controllers 1] [--seconds 30]

Each run starts the cluster once each way, interleaved (the order alternating), with the JVM options tests use
(`SHORT_LIVED_JVM_OPTIONS`) and `FAST_FAILOVER` both ways; after a 10 s settle it reads every node's CPU time
(user + system, /proc) over `--seconds` and reports it as a share of one core per node.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time

import psutil

from kafkabench.cluster import EmbeddedCluster
from kafkabench.cluster.artifacts import JarCache
from kafkabench.cluster.embedded import FAST_FAILOVER, QUIET_WHEN_IDLE, SHORT_LIVED_JVM_OPTIONS

AIM = 0.8
SETTLE_S = 10


def idle_share(settings: dict[str, str], brokers: int, controllers: int, seconds: float) -> float:
    """Mean share of a core each node used while idle."""
    with tempfile.TemporaryDirectory(prefix="kafkabench-idle-") as directory:
        cluster = EmbeddedCluster(brokers=brokers, controllers=controllers, directory=directory,
                                  broker_config_overrides={**settings, **FAST_FAILOVER},
                                  jvm_options=SHORT_LIVED_JVM_OPTIONS)
        with cluster:
            status = cluster.status()
            nodes = [psutil.Process(node.pid) for node in status.brokers + status.controllers]
            time.sleep(SETTLE_S)
            before = [sum(node.cpu_times()[:2]) for node in nodes]
            time.sleep(seconds)
            after = [sum(node.cpu_times()[:2]) for node in nodes]
    return statistics.mean((b - a) / seconds for a, b in zip(before, after))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--brokers", type=int, default=3)
    parser.add_argument("--controllers", type=int, default=1)
    parser.add_argument("--seconds", type=float, default=30)
    options = parser.parse_args()
    JarCache().ensure()
    shares: dict[str, list[float]] = {"defaults": [], "quiet": []}
    for run in range(options.runs):
        ways = [("defaults", {}), ("quiet", QUIET_WHEN_IDLE)]
        for name, settings in ways if run % 2 == 0 else reversed(ways):
            shares[name].append(idle_share(settings, options.brokers, options.controllers, options.seconds))
        print(f"run {run + 1}/{options.runs}: per node, Kafka's defaults {shares['defaults'][-1]:.1%} of a core, "
              f"quiet {shares['quiet'][-1]:.1%}", flush=True)
    defaults, quiet = statistics.median(shares["defaults"]), statistics.median(shares["quiet"])
    print(f"\n{'settings':>9}  {'per node':>9}  {'range':>13}")
    for name, median in (("defaults", defaults), ("quiet", quiet)):
        print(f"{name:>9}  {median:>9.1%}  {min(shares[name]):>5.1%}-{max(shares[name]):>5.1%}")
    ratio = quiet / defaults
    print(f"\nratio quiet / defaults {ratio:.3f} (aim <= {AIM}: {'met' if ratio <= AIM else 'MISSED'}); "
          f"{options.brokers} broker(s) + {options.controllers} controller(s), {os.cpu_count()} cores, "
          f"{options.runs} interleaved runs, medians")


if __name__ == "__main__":
    main()

"""How long a test session waits for its cluster through the pytest plugin, against `kafkabench cluster up` starting
the same cluster: the plugin must add nothing (aim: a ratio of at most 1.05).

    .venv/bin/python benchmarks/plugin_startup.py [--runs 5] [--brokers 1,3]

Each run is a fresh process, the two ways and the sizes interleaved so machine drift hits each alike:

    fixture      `pytest -p kafkabench` on one test that asks for `kafka_cluster` with the size's marker: from the
                 process's launch to the test's first line (pytest's start, collection, the cluster's start)
    cluster up   `kafkabench cluster up --brokers N` with the JVM options and broker settings the plugin gives its
                 brokers (`SHORT_LIVED_JVM_OPTIONS`, `FAST_FAILOVER`: heartbeats every 0.5 s unfence a broker
                 sooner than the default 2 s): from the launch to its line "Kafka ... ready in" (not to its exit)

Both are ready at the same point: every broker answers metadata listing all of them and an acks=all write to a probe
topic with RF min(3, brokers) is acknowledged. Jars are fetched once before timing.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from kafkabench.cluster.artifacts import JarCache
from kafkabench.cluster.embedded import FAST_FAILOVER, SHORT_LIVED_JVM_OPTIONS

AIM = 1.05
TEST = '''
import time
import pytest


@pytest.mark.kafka(brokers={brokers})
def test_ready(kafka_cluster):
    with open("ready", "w") as out:
        out.write(repr(time.time()))
'''


def through_the_fixture(brokers: int, directory: Path) -> float:
    (directory / "test_ready.py").write_text(TEST.format(brokers=brokers))
    (directory / "ready").unlink(missing_ok=True)
    launched = time.time()
    done = subprocess.run([sys.executable, "-m", "pytest", "-p", "kafkabench", "-p", "no:cacheprovider", "-q",
                           "test_ready.py"], cwd=directory, capture_output=True, text=True, timeout=300)
    if done.returncode != 0:
        raise SystemExit(f"the fixture's session failed:\n{done.stdout}{done.stderr}")
    return float((directory / "ready").read_text()) - launched


def through_cluster_up(brokers: int, env: dict) -> float:
    """From the launch to the line the command prints once the cluster took its write (not to its exit, which the
    fixture's figure leaves out too)."""
    launched = time.time()
    up = subprocess.Popen([sys.executable, "-m", "kafkabench", "cluster", "up", "--brokers", str(brokers),
                           *(f"--jvm-option={o}" for o in SHORT_LIVED_JVM_OPTIONS),
                           *(f"--broker-config={key}={value}" for key, value in FAST_FAILOVER.items())],
                          env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    ready = None
    for line in up.stderr:
        if " ready in " in line and ready is None:
            ready = time.time() - launched
    if up.wait(300) != 0 or ready is None:
        raise SystemExit(f"`kafkabench cluster up` failed (exit {up.returncode})")
    down = subprocess.run([sys.executable, "-m", "kafkabench", "cluster", "down"], env=env, capture_output=True,
                          text=True, timeout=300)
    if down.returncode != 0:
        raise SystemExit(f"`kafkabench cluster down` failed: {down.stderr.strip()}")
    return ready


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--brokers", default="1,3", help="cluster sizes, interleaved (default: 1,3)")
    options = parser.parse_args()
    sizes = [int(size) for size in options.brokers.split(",")]
    JarCache().ensure()
    fixture: dict[int, list[float]] = {size: [] for size in sizes}
    cli: dict[int, list[float]] = {size: [] for size in sizes}
    with tempfile.TemporaryDirectory(prefix="kafkabench-plugin-startup-") as name:
        directory = Path(name)
        env = {**os.environ, "KAFKABENCH_CLUSTER_DIR": str(directory / "cluster")}
        for run in range(options.runs):
            for brokers in sizes:
                ways = [("fixture", lambda: through_the_fixture(brokers, directory)),
                        ("cluster up", lambda: through_cluster_up(brokers, env))]
                for name_, way in ways if run % 2 == 0 else reversed(ways):
                    (fixture if name_ == "fixture" else cli)[brokers].append(way())
                print(f"run {run + 1}/{options.runs}: {brokers} broker(s): fixture {fixture[brokers][-1]:.2f} s, "
                      f"cluster up {cli[brokers][-1]:.2f} s", flush=True)
    print(f"\n{'brokers':>7}  {'fixture':>9}  {'range':>11}  {'cluster up':>10}  {'range':>11}  {'ratio':>6}  "
          f"{'aim':>5}")
    for brokers in sizes:
        ours, theirs = statistics.median(fixture[brokers]), statistics.median(cli[brokers])
        print(f"{brokers:>7}  {ours:>8.2f}s  {min(fixture[brokers]):>4.1f}-{max(fixture[brokers]):>4.1f} s  "
              f"{theirs:>9.2f}s  {min(cli[brokers]):>4.1f}-{max(cli[brokers]):>4.1f} s  {ours / theirs:>6.3f}  "
              f"{'met' if ours / theirs <= AIM else 'MISSED':>5}")
    print(f"\n{os.cpu_count()} cores; {options.runs} interleaved runs per size and way; medians, seconds from the "
          "process's launch to a cluster that took a write")


if __name__ == "__main__":
    main()

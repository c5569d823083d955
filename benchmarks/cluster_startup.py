"""How long `kafkabench cluster up` takes until a topic with RF 3 takes a write, for 3 brokers (and 1), and where the
seconds go.

    .venv/bin/python benchmarks/cluster_startup.py [--runs 5] [--brokers 3,1] [--controllers 1]
                                                   [--jvm-option=-XX:TieredStopAtLevel=1]

Jars are fetched once before timing. Each run is the real CLI in a fresh process (what a user waits for: interpreter
start, Java discovery, storage format, JVM start, KRaft quorum, broker registration, readiness probe), the sizes
interleaved so machine drift hits each alike; `cluster down` is timed too. A run is ready when the CLI returns: every
broker answers metadata listing all of them and an acks=all write to a probe topic with RF min(3, brokers) is
acknowledged.

The breakdown (medians, seconds from the CLI's launch to the end of each phase) comes from the cluster's own record
of its start (`startup` in cluster.json) and the nodes' logs:

    python      the interpreter and kafkabench's imports, until the cluster starts
    set up      Java found, jars verified, ports, directories and settings written
    formatted   every node's storage formatted by a JVM of its own, in parallel (without a javac; otherwise each
                node formats its own in its JVM, within "jvm", and this ends with "set up")
    jvm         the last node's JVM running Kafka's code (its first log line)
    leader      the KRaft quorum's first leader elected
    registered  the last broker registered with the controller
    started     the last broker unfenced and serving ("Kafka Server started")
    served      every broker answered metadata listing all of them (asked every 0.2 s)
    written     the probe write acknowledged by min(3, brokers) replicas
    up          the CLI returned

and the CPU the nodes' JVMs had used by then (node CPU, summed over the nodes): on a few cores the start is bound
by it.

The aim of 3 brokers ready in 5 s is printed as a ratio: at or below 1.0 meets it.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

from kafkabench.cluster.artifacts import JarCache

from harness import cpu_s

AIM_S = {1: 5.0, 3: 5.0}
LOG_TIME = re.compile(r"^\[(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3})\] ")
PHASES = ("python", "set up", "formatted", "jvm", "leader", "registered", "started", "served", "written", "up")
COLUMNS = (*PHASES, "node CPU")


def kafkabench(args: list[str], env: dict) -> None:
    done = subprocess.run([sys.executable, "-m", "kafkabench", *args], env=env, capture_output=True, text=True, timeout=300)
    if done.returncode != 0:
        raise SystemExit(f"`kafkabench {' '.join(args)}` failed: {done.stderr.strip()}")


def logged_at(line: str) -> float | None:
    match = LOG_TIME.match(line)
    return datetime.strptime(match.group(1), "%Y-%m-%d %H:%M:%S,%f").timestamp() if match else None


def node_events(log: Path) -> dict[str, float]:
    """When this node's JVM logged its first line (the last JVM to write the log: a storage formatter of its own,
    where there is one, wrote before it), became the quorum's leader, registered as a broker and finished starting."""
    events: dict[str, float] = {}
    for line in log.read_text(errors="replace").splitlines():
        at = logged_at(line)
        if at is None:
            continue
        if "Registered `kafka:type=kafka.Log4jController`" in line:
            events["jvm"] = at
        elif "Completed transition to Leader" in line:
            events.setdefault("leader", at)
        elif "Successfully registered broker" in line:
            events.setdefault("registered", at)
        elif "Kafka Server started" in line:
            events.setdefault("started", at)
    return events


def one_run(brokers: int, controllers: int, env: dict, directory: Path, jvm_options: list[str]) -> dict[str, float]:
    launched = time.time()
    kafkabench(["cluster", "up", "--brokers", str(brokers), "--controllers", str(controllers),
                *(f"--jvm-option={o}" for o in jvm_options)], env)
    up = time.time() - launched
    state = json.loads((directory / "cluster.json").read_text())
    began = launched + up - state["startup"]["write accepted"]  # the CLI returns right after its last phase
    phases = {"python": began - launched, "set up": began + state["startup"]["set up"] - launched,
              "formatted": began + state["startup"].get("storage formatted", state["startup"]["set up"]) - launched}
    events = [node_events(Path(node["directory"]) / "broker.log") for node in state["nodes"]]
    phases["jvm"] = max(e["jvm"] for e in events) - launched
    phases["leader"] = min(e["leader"] for e in events if "leader" in e) - launched
    phases["registered"] = max(e["registered"] for e in events if "registered" in e) - launched
    phases["started"] = max(e["started"] for e in events) - launched
    phases["served"] = began + state["startup"]["metadata served"] - launched
    phases["written"] = began + state["startup"]["write accepted"] - launched
    phases["up"] = up
    phases["node CPU"] = cpu_s([node["pid"] for node in state["nodes"]])
    return phases


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--brokers", default="3,1", help="cluster sizes, interleaved (default: 3,1)")
    parser.add_argument("--controllers", type=int, default=0, help="dedicated controllers beside the brokers "
                        "(default: 0, combined nodes)")
    parser.add_argument("--jvm-option", action="append", default=[], help="a JVM option of the brokers (repeatable)")
    options = parser.parse_args()
    sizes = [int(size) for size in options.brokers.split(",")]
    JarCache().ensure()
    runs: dict[int, list[dict[str, float]]] = {size: [] for size in sizes}
    down: dict[int, list[float]] = {size: [] for size in sizes}
    with tempfile.TemporaryDirectory(prefix="kafkabench-startup-") as name:
        directory = Path(name)
        env = {**os.environ, "KAFKABENCH_CLUSTER_DIR": name}
        for run in range(options.runs):
            for brokers in sizes:
                runs[brokers].append(one_run(brokers, options.controllers, env, directory, options.jvm_option))
                stopping = time.perf_counter()
                kafkabench(["cluster", "down"], env)
                down[brokers].append(time.perf_counter() - stopping)
                print(f"run {run + 1}/{options.runs}: {brokers} broker(s) up {runs[brokers][-1]['up']:.1f} s, "
                      f"down {down[brokers][-1]:.1f} s", flush=True)
    print()
    print(f"{'brokers':>7}  " + "  ".join(f"{phase:>10}" for phase in COLUMNS)
          + f"  {'min':>5}  {'max':>5}  {'up/aim':>6}  {'down':>5}")
    for brokers in sizes:
        medians = {phase: statistics.median(run[phase] for run in runs[brokers]) for phase in COLUMNS}
        ups = [run["up"] for run in runs[brokers]]
        print(f"{brokers:>7}  " + "  ".join(f"{medians[phase]:>9.2f}s" for phase in COLUMNS)
              + f"  {min(ups):>4.1f}s  {max(ups):>4.1f}s  {medians['up'] / AIM_S[brokers]:>6.2f}  {statistics.median(down[brokers]):>4.1f}s")
    print(f"\n{os.cpu_count()} cores; {options.controllers or 'no'} dedicated controller(s); "
          f"{options.runs} interleaved runs per size; seconds from the CLI's launch to the end of each phase; "
          f"JVM options: {' '.join(options.jvm_option) or 'kafkabench defaults'}")


if __name__ == "__main__":
    main()

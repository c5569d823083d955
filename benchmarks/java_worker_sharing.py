"""The CPU of a `kafkabench produce --client java` call with the Java worker's class-sharing archive (made once, as
`workers/java_build.py` makes it) against the same call without it, against a 1-broker cluster this starts.

    .venv/bin/python benchmarks/java_worker_sharing.py [--rounds 5] [--count 2000]

The calls run interleaved. A call without the archive runs while it is put aside (and the list of classes that call
recorded is removed, so no archive is made from it); it is put back for the next. Printed: the medians of the calls'
user + system CPU (the orchestrator's and its worker's), and the ratio with / without.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from kafkabench.cluster import EmbeddedCluster
from kafkabench.cluster.artifacts import JarCache
from kafkabench.cluster.java import find_java
from kafkabench.workers.java_build import java_worker_command


def produce_cpu_s(bootstrap: str, count: int) -> float:
    before = os.times()
    subprocess.run([sys.executable, "-m", "kafkabench", "produce", "-b", bootstrap, "--client", "java", "--count",
                    str(count), "--rate", "2000", "--out", tempfile.mkdtemp(prefix="kafkabench-sharing-")],
                   capture_output=True, timeout=300, check=True)
    after = os.times()
    return (after.children_user - before.children_user) + (after.children_system - before.children_system)


def archive() -> Path:
    """The worker's archive; there must be one (a worker records, a later start has it made)."""
    command = java_worker_command(find_java(), JarCache().ensure())
    mapped = [option.split("=", 1)[1] for option in command if option.startswith("-XX:SharedArchiveFile=")]
    if not mapped:
        raise SystemExit("no archive of the Java worker's classes yet: run `kafkabench produce --client java` twice, "
                         "10 s apart, and wait for the archive to be made")
    return Path(mapped[0])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--count", type=int, default=2000)
    options = parser.parse_args()
    shared = archive()
    aside = shared.with_suffix(".aside")
    times: dict[str, list[float]] = {"with": [], "without": []}
    with tempfile.TemporaryDirectory(prefix="kafkabench-sharing-") as directory, \
            EmbeddedCluster(brokers=1, directory=Path(directory)) as cluster:
        for _ in range(options.rounds):
            times["with"].append(produce_cpu_s(cluster.bootstrap_servers, options.count))
            shared.rename(aside)
            try:
                times["without"].append(produce_cpu_s(cluster.bootstrap_servers, options.count))
            finally:
                shared.with_suffix(".recorded.lst").unlink(missing_ok=True)
                aside.rename(shared)
    with_, without = (statistics.median(times[kind]) for kind in ("with", "without"))
    print(f"`produce --client java --count {options.count}`, median CPU of {options.rounds} interleaved rounds: "
          f"with the archive {with_:.2f} s, without {without:.2f} s, ratio {with_ / without:.2f}")


if __name__ == "__main__":
    main()

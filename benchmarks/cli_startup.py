"""The CPU a command that needs no lab starts on: `kafkabench cluster status` (no cluster running, so it answers at
once) as `main` builds it, alone, against the same call through the whole command tree (every lab's options built
from its scenario), as every call was built before.

    .venv/bin/python benchmarks/cli_startup.py [--rounds 7]

The two run interleaved; printed: the medians of the processes' user + system CPU, and the ratio alone / whole.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile

ALONE = [sys.executable, "-m", "kafkabench", "cluster", "status"]
WHOLE = [sys.executable, "-c", "import sys; from kafkabench.cli.app import app; "
         "sys.argv = ['kafkabench', 'cluster', 'status']; app()"]


def cpu_s(command: list[str], env: dict[str, str]) -> float:
    before = os.times()
    subprocess.run(command, env=env, capture_output=True, timeout=120)
    after = os.times()
    return (after.children_user - before.children_user) + (after.children_system - before.children_system)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    rounds = parser.parse_args().rounds
    with tempfile.TemporaryDirectory() as empty:
        env = {**os.environ, "KAFKABENCH_CLUSTER_DIR": empty}
        times: dict[str, list[float]] = {"alone": [], "whole": []}
        for _ in range(rounds):
            times["alone"].append(cpu_s(ALONE, env))
            times["whole"].append(cpu_s(WHOLE, env))
    alone, whole = (statistics.median(times[kind]) for kind in ("alone", "whole"))
    print(f"`cluster status`, median CPU of {rounds} interleaved rounds: alone {alone:.2f} s, through the whole tree "
          f"{whole:.2f} s, ratio {alone / whole:.2f}")


if __name__ == "__main__":
    main()

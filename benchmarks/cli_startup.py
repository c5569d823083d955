"""The CPU a command starts on as `main` builds it, alone, against the same call through the whole command tree
(every lab's options built from its scenario), as every call was built before: `kafkabench cluster status` (no
cluster running, so it answers at once), a command that needs no lab, and `kafkabench latency --help`, a lab's.

    .venv/bin/python benchmarks/cli_startup.py [--rounds 7]

The calls run interleaved; printed, per command: the medians of the processes' user + system CPU, and the ratio
alone / whole.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile

CALLS = (["cluster", "status"], ["latency", "--help"])


def alone(arguments: list[str]) -> list[str]:
    return [sys.executable, "-m", "kafkabench", *arguments]


def whole(arguments: list[str]) -> list[str]:
    argv = ["kafkabench", *arguments]
    return [sys.executable, "-c", f"import sys; from kafkabench.cli.app import app; sys.argv = {argv!r}; app()"]


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
        times: dict[tuple[str, str], list[float]] = {}
        for _ in range(rounds):
            for arguments in CALLS:
                for kind, command in (("alone", alone), ("whole", whole)):
                    times.setdefault((" ".join(arguments), kind), []).append(cpu_s(command(arguments), env))
    print(f"median CPU of {rounds} interleaved rounds")
    for arguments in CALLS:
        call = " ".join(arguments)
        one, every = (statistics.median(times[call, kind]) for kind in ("alone", "whole"))
        print(f"`{call}`: alone {one:.2f} s, through the whole tree {every:.2f} s, ratio {one / every:.2f}")


if __name__ == "__main__":
    main()

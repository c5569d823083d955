"""What a Python worker's start costs: workers started as new interpreters (`python -m
kafkabench.workers.python_worker`, as every one was before) against workers forked from the fork server
(core.worker_forks), each answering one task that it refuses before any client exists (no broker needed).

    .venv/bin/python benchmarks/worker_forks.py [--rounds 5] [--workers 10]

Each round runs, for each kind in turn (interleaved, so machine drift hits both alike), a process that starts
--workers workers one after another, and records that process's CPU with everything it started (the fork server
and its workers among them) and each worker's time from its start to its answer. Printed: medians per kind, the
ratios forked / exec'd, and the CPU a worker start costs in each (the process's own start and imports taken off).
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys

KINDS = ("exec'd", "forked")
STARTER = r"""
import json, sys, time
from kafkabench.clients import worker_command
from kafkabench.core.protocol import Error, Task
from kafkabench.core.worker_forks import FORKS
from kafkabench.core.worker_process import WorkerFailed, WorkerProcess

kind, count = sys.argv[1], int(sys.argv[2])
task = Task(scenario="produce", client="confluent", bootstrap_servers="127.0.0.1:1", topic="t", payload_files=[],
            timeout_s=1, params={"count": 10, "rate_per_s": 0})
answers = []
for _ in range(count):
    began = time.monotonic()
    worker = WorkerProcess("w", process=FORKS.spawn("confluent")) if kind == "forked" else \
        WorkerProcess("w", worker_command("confluent"))
    worker.send(task)
    try:
        worker.receive(Error, 60)
    except WorkerFailed as refused:
        assert refused.kind == "config", refused
    answers.append(time.monotonic() - began)
    assert worker.wait_exit(60) == 2
FORKS.close()
print(json.dumps(answers))
"""


def one(kind: str, workers: int) -> tuple[float, float]:
    """The CPU of a process starting `workers` workers of `kind` (0: none, the process alone), and the median
    time from a worker's start to its answer."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run([sys.executable, "-c", STARTER, kind, str(workers)], capture_output=True, text=True,
                          timeout=120 + 30 * workers)
    if done.returncode != 0:
        raise SystemExit(f"{kind} workers failed: {done.stderr.strip()[-600:]}")
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    answers = json.loads(done.stdout)
    return cpu, statistics.median(answers) if answers else 0.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--workers", type=int, default=10)
    options = parser.parse_args()
    cpu: dict[str, list[float]] = {kind: [] for kind in (*KINDS, "none")}
    answer: dict[str, list[float]] = {kind: [] for kind in KINDS}
    for round_ in range(options.rounds):
        cpu["none"].append(one("exec'd", 0)[0])
        for kind in KINDS:
            spent, took = one(kind, options.workers)
            cpu[kind].append(spent)
            answer[kind].append(took)
            print(f"round {round_ + 1}/{options.rounds} {kind:>6}: {spent:.2f} CPU-s, answer {took * 1000:.0f} ms",
                  flush=True)
    alone = statistics.median(cpu["none"])
    medians = {kind: (statistics.median(cpu[kind]), statistics.median(answer[kind])) for kind in KINDS}
    print(f"\n{'':>8}{'CPU-s':>10}{'a worker, CPU-s':>18}{'answer ms':>12}")
    for kind in KINDS:
        spent, took = medians[kind]
        print(f"{kind:>8}{spent:>10.2f}{(spent - alone) / options.workers:>18.3f}{took * 1000:>12.0f}")
    (fork_cpu, fork_answer), (exec_cpu, exec_answer) = medians["forked"], medians["exec'd"]
    print(f"{'ratio':>8}{fork_cpu / exec_cpu:>10.2f}{(fork_cpu - alone) / (exec_cpu - alone):>18.2f}"
          f"{fork_answer / exec_answer:>12.2f}")
    print(f"\nmedians of {options.rounds} interleaved rounds of {options.workers} workers each; the process alone "
          f"(its interpreter and imports, no worker): {alone:.2f} CPU-s. Forked: the fork server's start included.")


if __name__ == "__main__":
    main()

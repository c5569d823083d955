"""Does kafkabench's paced (open-loop) producer report what the client does at a fixed rate? kafkabench / a minimal loop.

    .venv/bin/python benchmarks/paced_overhead.py [--clients confluent,java] [--rates 1000,10000] [--size 1000]
        [--seconds 10] [--repeats 3] [--bootstrap-servers HOST:PORT] [--threads]

The capacity lab, `produce --rate` and `tune` all stand on the paced producer: its publish latency and its CPU
must be the client's, not the cost of our waiting. One embedded broker (or --bootstrap-servers). For each
client and rate, kafkabench (in process, through the lab API, no consumer) and a minimal hand-written paced
loop of that client (benchmarks/minimal_confluent_paced.py, MinimalJavaPaced.java: no kafkabench code, client
defaults on both sides) send rate x seconds records of --size random bytes to a fresh one-partition topic.
One discarded pass of each first, then --repeats interleaved repeats in ABBA order. Per case: each side's
publish latency p50 and p99, delay p99 (due -> send call) and process CPU seconds; the ratios kafkabench /
minimal are medians of the per-repeat ratios. Targets: publish p50 and CPU within 0.95 .. 1.05 and <= 1.2.

`--threads` (Python clients): also sample each side's process per thread (/proc/PID/task/*/schedstat, every 0.2 s) and print, over
the run's steady part (from 1 s after the first sample to 1 s before the last), the main thread's CPU and the times
it was put on a core per record (a wake-up: more of them would be spinning or extra naps), and the same for the
client's own threads together: where the CPU of the two loops differs, and whether by more wake-ups or by more
work per wake-up.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path

import psutil

from kafkabench.admin import KafkaAdmin
from kafkabench.cluster.target import Target
from kafkabench.core.events import SILENT
from kafkabench.labs.throughput.run import run_throughput
from kafkabench.labs.throughput.scenario import ProduceScenario

from harness import java_loop_command, open_target

HERE = Path(__file__).parent
P50_RANGE, CPU_MAX = (0.95, 1.05), 1.2
FIGURES = ("p50", "p99", "delay_p99", "cpu_s")
THREAD_FIGURES = ("main_ms_per_s", "main_wakeups_per_record", "client_ms_per_s", "client_wakeups_per_s")


def kafkabench_side(target: Target, client: str, size: int, count: int, rate: float, work: Path,
                    threads: bool = False) -> dict:
    scenario = ProduceScenario(client=client, size=size, count=count, rate=rate, consumers=0)
    sampler = ThreadSampler(lambda: _worker_pid(psutil.Process())) if threads else None
    run = run_throughput(scenario, target, work / uuid.uuid4().hex[:8], SILENT).runs[0]
    assert not run.error and run.counters["acked"] == count, (run.error, run.counters)
    latency, delay = run.stats["publish_latency"], run.stats["publish_delay"]
    return {"p50": latency.p50_ms, "p99": latency.p99_ms, "delay_p99": delay.p99_ms, "cpu_s": run.resources["cpu_s"],
            **(sampler.figures(rate) if sampler else {})}


def _worker_pid(me: psutil.Process) -> int | None:
    for child in me.children(recursive=True):
        with contextlib.suppress(psutil.Error):
            if "kafkabench.workers.python_worker" in child.cmdline():
                return child.pid
    return None


class ThreadSampler:
    """Per-thread schedstat (ns on a core, times put on a core) of one process, sampled on a thread of its own until
    the process ends; `figures` reads the steady part of the run."""

    def __init__(self, find_pid) -> None:
        self.samples: list[tuple[float, dict[str, tuple[int, int]]]] = []
        self._thread = threading.Thread(target=self._follow, args=(find_pid,), daemon=True)
        self._thread.start()

    def _follow(self, find_pid) -> None:
        deadline = time.monotonic() + 120
        while (pid := find_pid()) is None and time.monotonic() < deadline:
            time.sleep(0.05)
        while pid is not None and (sample := _schedstat(pid)):
            self.samples.append((time.monotonic(), sample))
            time.sleep(0.2)

    def figures(self, rate: float) -> dict:
        self._thread.join(10)
        steady = [s for s in self.samples if self.samples[0][0] + 1 <= s[0] <= self.samples[-1][0] - 1]
        (t0, first), (t1, last) = steady[0], steady[-1]
        seconds = t1 - t0
        delta = {name: [b - a for a, b in zip(first[name], values)] for name, values in last.items() if name in first}
        main, client = delta.get("main", [0, 0]), [sum(v[i] for n, v in delta.items() if n != "main") for i in (0, 1)]
        return {"main_ms_per_s": main[0] / 1e6 / seconds, "main_wakeups_per_record": main[1] / seconds / rate,
                "client_ms_per_s": client[0] / 1e6 / seconds, "client_wakeups_per_s": client[1] / seconds}


def _schedstat(pid: int) -> dict[str, tuple[int, int]] | None:
    """{"main" or "tid": (ns on a core, times put on a core)}; None once the process is gone (or a zombie)."""
    try:
        if Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] in "ZX":
            return None
        found = {}
        for tid in os.listdir(f"/proc/{pid}/task"):
            with contextlib.suppress(OSError):
                run_ns, _waited_ns, slices = map(int, Path(f"/proc/{pid}/task/{tid}/schedstat").read_text().split())
                found["main" if tid == str(pid) else tid] = (run_ns, slices)
        return found
    except OSError:
        return None


def minimal_command(client: str, work: Path) -> list[str]:
    if client == "confluent":
        return [sys.executable, str(HERE / "minimal_confluent_paced.py")]
    return java_loop_command("MinimalJavaPaced", work)


def minimal_side(bootstrap: str, client: str, size: int, count: int, rate: float, work: Path,
                 threads: bool = False) -> dict:
    topic = f"minimal-paced-{uuid.uuid4().hex[:8]}"
    with KafkaAdmin(bootstrap) as admin:
        admin.create_topic(topic, 1, 1)
        try:
            process = subprocess.Popen([*minimal_command(client, work), bootstrap, topic, str(size), str(count), str(rate)],
                                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            sampler = ThreadSampler(lambda: process.pid) if threads else None
            stdout, stderr = process.communicate(timeout=600)
            assert process.returncode == 0, stderr[-400:]
        finally:
            admin.delete_topic(topic)
    report = json.loads(stdout.strip().splitlines()[-1])
    assert report["records"] == count and not report["errors"], report
    return {"p50": report["latency_us"]["p50"] / 1e3, "p99": report["latency_us"]["p99"] / 1e3,
            "delay_p99": report["delay_us"]["p99"] / 1e3, "cpu_s": report["cpu_s"],
            **(sampler.figures(rate) if sampler else {})}


def compare(client: str, rate: float, target: Target, args, work: Path) -> str:
    count = int(rate * args.seconds)
    sides = {"kafkabench": lambda: kafkabench_side(target, client, args.size, count, rate, work, args.threads),
             "minimal": lambda: minimal_side(target.bootstrap_servers, client, args.size, count, rate, work, args.threads)}
    for run in sides.values():  # discarded: broker JIT, page cache
        run()
    figures: dict[str, list[dict]] = {name: [] for name in sides}
    for repeat in range(args.repeats):
        for name in (sides if repeat % 2 == 0 else reversed(list(sides))):
            figures[name].append(sides[name]())
        print(f"{client} {rate:,.0f}/s repeat {repeat + 1}: " + "; ".join(
            f"{name} " + ", ".join(f"{k} {v:.3g}" for k, v in figures[name][-1].items()) for name in sides), flush=True)
    ratio = {k: statistics.median(ours[k] / theirs[k] for ours, theirs in zip(figures["kafkabench"], figures["minimal"]))
             for k in FIGURES}
    median = {name: {k: statistics.median(f[k] for f in runs) for k in FIGURES} for name, runs in figures.items()}
    if args.threads:
        for name, runs in figures.items():
            print(f"{client} {rate:,.0f}/s {name} threads, medians: " + ", ".join(
                f"{k} {statistics.median(f[k] for f in runs):.3g}" for k in THREAD_FIGURES), flush=True)
    met = P50_RANGE[0] <= ratio["p50"] <= P50_RANGE[1] and ratio["cpu_s"] <= CPU_MAX
    return (f"| {client} | {rate:,.0f} | " + " | ".join(
        f"{median['kafkabench'][k]:.3g} / {median['minimal'][k]:.3g} ({ratio[k]:.2f})" for k in FIGURES)
        + f" | {'met' if met else 'MISSED'} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", default="confluent,java")
    parser.add_argument("--rates", default="1000,10000")
    parser.add_argument("--size", type=int, default=1000)
    parser.add_argument("--seconds", type=float, default=10)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--bootstrap-servers")
    parser.add_argument("--threads", action="store_true", help="per-thread CPU and wake-ups of each side (Linux /proc)")
    args = parser.parse_args()
    rows = []
    with contextlib.ExitStack() as stack:
        work = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="kafkabench-paced-")))
        target = open_target(stack, args.bootstrap_servers, work)
        for client in args.clients.split(","):
            for rate in (float(r) for r in args.rates.split(",")):
                rows.append(compare(client, rate, target, args, work))
    print(f"\n{args.size} B records, {args.seconds:g} s per run, medians of {args.repeats} repeats; "
          "kafkabench / minimal (ratio); latencies in ms")
    print("| client | records/s | publish p50 | publish p99 | delay p99 | CPU s | target |\n|---|---:|---:|---:|---:|---:|---|")
    print("\n".join(rows))
    print(f"targets: publish p50 ratio {P50_RANGE[0]:.2f} .. {P50_RANGE[1]:.2f}, CPU ratio <= {CPU_MAX:.1f}")


if __name__ == "__main__":
    main()

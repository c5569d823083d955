"""Does the monitor stay flat over time, and does its probe add nothing to what a client sees?

    .venv/bin/python benchmarks/monitor_footprint.py [--minutes 10] [--interval 0.1] [--latency-count 300]

Starts its own embedded cluster (3 brokers). Runs `kafkabench monitor` as a process of its own for --minutes at
--interval (one probe per partition per interval: 3 partitions), and samples the resident memory (RSS) and CPU time
of it and its parts' processes with psutil every 10 s. Reports:

- RSS after the whole run / RSS after 1 minute (target <= 1.1);
- CPU per probe: the monitor's CPU time (user + system) over the run / probes sent, in microseconds;
- the probe's roundtrip p50 / the latency lab's confluent e2e p50 for a small message on the same cluster (target
  <= 1.2): the latency lab runs right after the watch with the probe's settings (100-byte values, acks=all,
  replication factor 3), --latency-count messages, twice: with the probe's cadence (`--pause` of one interval
  before each message: client and brokers idle between messages, as between probes) and back to back (every
  thread on the path still awake from the last message). Only the first compares like with like; the second
  shows what idleness costs on this machine.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil

from kafkabench.cluster import EmbeddedCluster

SAMPLE_S = 10


def watch(bootstrap: str, minutes: float, interval: float, out: Path) -> tuple[list[tuple[float, float, float]], dict]:
    """(seconds, RSS MB, CPU s) samples of the monitor process, and its result document."""
    command = [sys.executable, "-m", "kafkabench", "monitor", "-b", bootstrap, "--interval", str(interval),
               "--duration", str(minutes * 60), "--metrics-port", "0", "--json-lines", "--out", str(out)]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
    monitor, begun, samples = psutil.Process(process.pid), time.monotonic(), []
    try:
        while process.poll() is None:
            try:
                tree = [monitor, *monitor.children(recursive=True)]  # the serving process and its parts
            except psutil.NoSuchProcess:
                break
            rss = cpu = 0.0
            for member in tree:
                try:
                    with member.oneshot():
                        times = member.cpu_times()
                        rss, cpu = rss + member.memory_info().rss / 2**20, cpu + times.user + times.system
                except psutil.NoSuchProcess:
                    continue  # a part that ended between the listing and the look
            samples.append((time.monotonic() - begun, rss, cpu))
            time.sleep(SAMPLE_S)
    finally:
        if process.poll() is None:
            process.terminate()
        process.wait(60)
    return samples, json.loads((out / "result.json").read_text())


def latency_p50_ms(bootstrap: str, count: int, pause: float, out: Path) -> float:
    done = subprocess.run([sys.executable, "-m", "kafkabench", "latency", "-b", bootstrap, "--clients", "confluent",
                           "--size", "100", "--acks", "all", "--replication-factor", "3", "-n", str(count),
                           "--pause", str(pause), "--json", "--out", str(out)],
                          capture_output=True, text=True, timeout=900, check=True)
    document = json.loads(done.stdout)
    return next(run["stats"]["e2e"]["p50_ms"] for run in document["runs"] if run["client"] == "confluent")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=10)
    parser.add_argument("--interval", type=float, default=0.1)
    parser.add_argument("--latency-count", type=int, default=300)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="kafkabench-monitor-footprint-") as work:
        with EmbeddedCluster(brokers=3, directory=Path(work) / "cluster") as cluster:
            samples, document = watch(cluster.bootstrap_servers, args.minutes, args.interval, Path(work) / "monitor")
            paced_p50 = latency_p50_ms(cluster.bootstrap_servers, args.latency_count, args.interval,
                                       Path(work) / "paced")
            e2e_p50 = latency_p50_ms(cluster.bootstrap_servers, args.latency_count, 0, Path(work) / "back-to-back")
    run = document["runs"][0]
    at_minute = min(samples, key=lambda sample: abs(sample[0] - 60))
    last = samples[-1]
    probes = run["counters"]["sent"]
    probe_p50 = run["stats"]["roundtrip"]["p50_ms"]
    print(f"monitor, {args.minutes:g} min at {args.interval:g} s on 3 brokers: {probes:,} probes, "
          f"{run['counters']['lost']} lost, roundtrip p50 {probe_p50:.3f} ms p99 {run['stats']['roundtrip']['p99_ms']:.3f} ms")
    print("RSS MB over time: " + ", ".join(f"{t:.0f}s {rss:.1f}" for t, rss, _ in samples[::6]) + f", {last[0]:.0f}s {last[1]:.1f}")
    print(f"RSS at the end / at 1 min: {last[1]:.1f} / {at_minute[1]:.1f} MB = {last[1] / at_minute[1]:.3f} (target <= 1.1)")
    print(f"CPU: {last[2]:.1f} s for {probes:,} probes = {last[2] / probes * 1e6:.0f} us per probe "
          f"(CPU s per minute: first {at_minute[2] / at_minute[0] * 60:.2f}, overall {last[2] / last[0] * 60:.2f})")
    print(f"probe roundtrip p50 / latency lab confluent e2e p50 (100 B, acks=all, RF 3), {args.interval:g} s pause "
          f"before each: {probe_p50:.3f} / {paced_p50:.3f} ms = {probe_p50 / paced_p50:.2f} (target <= 1.2)")
    print(f"  the same lab back to back: {e2e_p50:.3f} ms (probe / back to back = {probe_p50 / e2e_p50:.2f}; "
          f"paced / back to back = {paced_p50 / e2e_p50:.2f}: what idleness costs)")


if __name__ == "__main__":
    main()

"""Seed 000's goal: the 1.3 MB camera image at 30 frames/s, e2e p50 within 2x the TCP floor of the same run (two
hops, store and forward), or a breakdown that shows, phase by phase, what stands between this cluster and that.

    .venv/bin/python benchmarks/image_at_30fps.py [--repeats 3] [--count 60] [--clients confluent,java]

One embedded broker; each variant is a whole latency run (the clients and the tcp floor side by side), the variants
taking turns (A B C, C B A, ...) so all see the same machine. Prints per variant and client the median e2e p50 over
the repeats against the median floor, and where the e2e and produce time went: the means of every measured message
of every repeat (each run's means weigh the same: every run measures the same count).
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
from collections import defaultdict
from pathlib import Path

from kafkabench.cluster import EmbeddedCluster
from kafkabench.cluster.target import Target
from kafkabench.core.events import SILENT
from kafkabench.labs.latency.scenario import LatencyScenario
from kafkabench.labs.latency.session import run_latency

FRAME_GAP_S = 1 / 30
GOAL = 2.0  # x the tcp floor
VARIANTS = {  # name -> (pause before each message, client settings)
    "defaults, 30 fps": (FRAME_GAP_S, {}),
    "socket buffers left to the OS, 30 fps": (FRAME_GAP_S, {"send.buffer.bytes": "-1", "receive.buffer.bytes": "-1"}),
    "defaults, back to back": (0.0, {}),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--count", type=int, default=60)
    parser.add_argument("--clients", default="confluent,java")
    args = parser.parse_args()
    clients = args.clients.split(",")
    p50: dict[tuple[str, str], list[float]] = defaultdict(list)
    parts: dict[tuple[str, str], list[dict]] = defaultdict(list)
    with tempfile.TemporaryDirectory(prefix="kafkabench-30fps-") as work, \
            EmbeddedCluster(directory=Path(work) / "cluster") as cluster:
        for repeat in range(args.repeats):
            for variant in list(VARIANTS)[::1 if repeat % 2 == 0 else -1]:
                pause, overrides = VARIANTS[variant]
                scenario = LatencyScenario(count=args.count, warmup=10, rounds=4, pause=pause,
                                           clients=[*clients, "tcp"], overrides=overrides)
                document = run_latency(scenario, Target.embedded(cluster), Path(work) / f"{repeat}-{variant}", SILENT)
                for run in document.runs:
                    p50[(variant, run.client)].append(run.stats["e2e"].p50_ms)
                    if "path_ms" in run.params.get("broker_phases", {}).get("e2e", {}):
                        parts[(variant, run.client)].append(run.params["broker_phases"])
                print(f"repeat {repeat + 1}/{args.repeats}, {variant}: " + ", ".join(
                    f"{run.client} {run.stats['e2e'].p50_ms:.2f}" for run in document.runs) + " ms e2e p50", flush=True)
    print(f"\n1.3 MB image, {args.count} messages a client a run, {args.repeats} repeats; goal: e2e p50 <= {GOAL:g}x "
          "the tcp floor")
    for variant in VARIANTS:
        floor = statistics.median(p50[(variant, "tcp")])
        print(f"\n{variant}: tcp floor e2e p50 {floor:.2f} ms (range {min(p50[(variant, 'tcp')]):.2f}-"
              f"{max(p50[(variant, 'tcp')]):.2f})")
        for client in clients:
            median = statistics.median(p50[(variant, client)])
            print(f"  {client:>10}: e2e p50 {median:.2f} ms (range {min(p50[(variant, client)]):.2f}-"
                  f"{max(p50[(variant, client)]):.2f}) = {median / floor:.1f}x the floor "
                  f"({'met' if median <= GOAL * floor else 'missed'})")
            for line in breakdown(parts[(variant, client)]):
                print(f"              {line}")


def breakdown(runs: list[dict]) -> list[str]:
    """The runs' breakdowns as one: means of means over equal counts are the means over all their messages."""
    if not runs:
        return ["no breakdown (the brokers' request logs had none)"]

    def mean(pick) -> float:
        return statistics.fmean(pick(run) for run in runs)

    produce = ", ".join(f"{name} {mean(lambda r: r['phases_ms'][name]):.2f}" for name in runs[0]["phases_ms"]
                        if mean(lambda r: r["phases_ms"][name]) >= 0.005)
    way = ", ".join(f"{name} {mean(lambda r: r['e2e']['path_ms'][name]):.2f}" for name in runs[0]["e2e"]["path_ms"]
                    if mean(lambda r: r["e2e"]["path_ms"][name]) >= 0.005)
    return [f"e2e mean {mean(lambda r: r['e2e']['e2e_ms']):.2f} = clients and wire "
            f"{mean(lambda r: r['e2e']['clients_ms']):.2f} + broker {mean(lambda r: r['e2e']['broker_ms']):.2f} "
            f"({way})",
            f"produce mean {mean(lambda r: r['produce_ms']):.2f} = client and wire {mean(lambda r: r['client_ms']):.2f}"
            f" + broker {mean(lambda r: r['broker_ms']):.2f} ({produce})"]


if __name__ == "__main__":
    main()

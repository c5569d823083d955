"""What saying where the produce time went costs: the latency lab with the brokers' request logger on (the default)
against the same lab with it off (--no-broker-phases), in one run on one embedded broker.

    .venv/bin/python benchmarks/broker_phases_cost.py [--repeats 4] [--count 60] [--clients confluent,java]

The two alternate (on, off, off, on, ...: ABBA), each a whole latency run of the seed's 1.3 MB image. Prints each
client's e2e p50 median with it on and off and their ratio (aim: within 5 %), and the breakdown of the last run
with it on.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
from pathlib import Path

from kafkabench.cluster import EmbeddedCluster
from kafkabench.cluster.target import Target
from kafkabench.core.events import SILENT
from kafkabench.labs.broker_phases import text
from kafkabench.labs.latency.scenario import LatencyScenario
from kafkabench.labs.latency.session import run_latency


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=4)
    parser.add_argument("--count", type=int, default=60)
    parser.add_argument("--clients", default="confluent,java")
    args = parser.parse_args()
    clients = args.clients.split(",")
    p50: dict[tuple[str, bool], list[float]] = {(c, on): [] for c in clients for on in (True, False)}
    last = None
    with tempfile.TemporaryDirectory(prefix="kafkabench-phases-") as work, \
            EmbeddedCluster(directory=Path(work) / "cluster") as cluster:
        for repeat in range(args.repeats):
            for on in ((True, False) if repeat % 2 == 0 else (False, True)):
                scenario = LatencyScenario(count=args.count, warmup=10, rounds=4, clients=clients, broker_phases=on)
                document = run_latency(scenario, Target.embedded(cluster), Path(work) / f"{repeat}-{on}", SILENT)
                for run in document.runs:
                    p50[(run.client, on)].append(run.stats["e2e"].p50_ms)
                last = document if on else last
                print(f"repeat {repeat + 1}/{args.repeats}, broker phases {'on' if on else 'off'}: " + ", ".join(
                    f"{run.client} e2e p50 {run.stats['e2e'].p50_ms:.2f} ms" for run in document.runs), flush=True)
    print(f"\n1.3 MB image, {args.count} messages a client a run, {args.repeats} repeats of each, ABBA")
    for client in clients:
        on, off = statistics.median(p50[(client, True)]), statistics.median(p50[(client, False)])
        print(f"  {client:>10}: e2e p50 median {on:.2f} ms on, {off:.2f} ms off: on / off {on / off:.3f} (aim <= 1.05)")
    for run in last.runs:
        if "broker_phases" in run.params:
            print("\n".join("  " + line for line in text(run.client, run.params["broker_phases"])))


if __name__ == "__main__":
    main()

"""Does the e2e probe cost the producer what it measures? The producers' publish latency with --e2e (a probe consumer
of the same client beside them, every message stamped) against the same run without, side by side, interleaved.

    .venv/bin/python benchmarks/e2e_probe_overhead.py [--clients confluent,java] [--rate 2000] [--seconds 60]
        [--repeats 2]

3 brokers beside a dedicated controller, embedded, started here. Per client and repeat, the delivery lab (async-close,
acks=all, idempotence, min.insync 2, 6 partitions, 1 KB records at --rate on its open-loop schedule, no fault) without
and then with --e2e, the order swapped every other repeat (ABBA), so drift lands on both sides. Compared: the publish
p50 and p99 of the run's second half (the first half is the client's warm-up, as the operations plan keeps it out),
from the windows' merged histograms, and the rate the bulk was handed over at. Target: publish p99 with the probe
<= 1.05 x without, and the rate >= 0.97 of the offered. Prints a line per run and the ratios.
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import tempfile
from pathlib import Path

from kafkabench.cluster import EmbeddedCluster
from kafkabench.cluster.target import Target
from kafkabench.core.events import SILENT
from kafkabench.labs.delivery.run import run_delivery
from kafkabench.labs.delivery.scenario import DeliveryScenario

LATENCY_TARGET = 1.05
RATE_TARGET = 0.97


def measured(target: Target, client: str, rate: int, seconds: float, e2e: bool, work: Path) -> dict:
    scenario = DeliveryScenario(clients=[client], modes=["async-close"], acks=["all"], idempotence=["on"], min_isr=[2],
                                partitions=6, size=1024, rate=rate, count=int(rate * seconds), e2e=e2e)
    [run] = run_delivery(scenario, target, work, SILENT).runs
    assert run.error is None and run.counters["lost"] == 0, (run.error, run.counters)
    second_half = [entry for entry in run.timeline if entry["t_s"] > seconds / 2 and entry.get("publish_p99_ms")]
    sent, singles = run.counters["sent"], sum(name.startswith("single_") for name in run.timings)
    probe = run.params.get("e2e_probe")
    return {"p50": statistics.median(entry["publish_p50_ms"] for entry in second_half),
            "p99": statistics.median(entry["publish_p99_ms"] for entry in second_half),
            "rate": (sent - singles) / (run.timings["bulk_ms"] / 1000), "probe": probe}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", default="confluent,java")
    parser.add_argument("--rate", type=int, default=2000)
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args()
    worst_latency, worst_rate = 0.0, 1.0
    with tempfile.TemporaryDirectory(prefix="kafkabench-e2e-probe-") as work, contextlib.ExitStack() as stack:
        cluster = stack.enter_context(EmbeddedCluster(brokers=3, controllers=1, directory=Path(work) / "cluster"))
        target = Target.embedded(cluster)
        for client in args.clients.split(","):
            found: dict[bool, list[dict]] = {False: [], True: []}
            for repeat in range(args.repeats):
                for e2e in (False, True) if repeat % 2 == 0 else (True, False):
                    one = measured(target, client, args.rate, args.seconds, e2e,
                                   Path(work) / f"{client}-{repeat}-{'e2e' if e2e else 'none'}")
                    found[e2e].append(one)
                    worst_rate = min(worst_rate, one["rate"] / args.rate)
                    print(f"{client} r{repeat + 1} {'with' if e2e else 'without'} the probe: publish p50 "
                          f"{one['p50']:.1f} ms, p99 {one['p99']:.1f} ms (second half, median of its seconds), "
                          f"{one['rate']:,.0f}/s of {args.rate:,}" + (f"; probe {one['probe']}" if e2e else ""),
                          flush=True)
            ratios = {name: statistics.median(r[name] for r in found[True]) /
                      statistics.median(r[name] for r in found[False]) for name in ("p50", "p99")}
            worst_latency = max(worst_latency, ratios["p99"])
            print(f"{client}: with / without the probe: publish p50 {ratios['p50']:.2f}, p99 {ratios['p99']:.2f}")
    print(f"worst publish p99 with / without: {worst_latency:.2f} (target <= {LATENCY_TARGET}: "
          f"{'met' if worst_latency <= LATENCY_TARGET else 'MISSED'}); worst rate achieved / offered {worst_rate:.3f} "
          f"(target >= {RATE_TARGET}: {'met' if worst_rate >= RATE_TARGET else 'MISSED'})")


if __name__ == "__main__":
    main()

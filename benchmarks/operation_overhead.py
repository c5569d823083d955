"""Does an operation cost the load generator its rate? The producers' achieved send rate with an operation under way,
against the rate offered, beside the same run with no operation.

    .venv/bin/python benchmarks/operation_overhead.py [--clients confluent,java] [--rate 2000] [--seconds 40]
        [--operations "rolling-restart;rolling-restart,kill;reassign,from=1"]

3 brokers beside a dedicated controller, embedded, started here. Per client, the delivery lab (async-close,
acks=all, idempotence, min.insync 2, 6 partitions, 1 KB records at --rate on its open-loop schedule): one run with
no operation (--seconds of sending), then one per operation, fired after 10,000 acknowledgements, the sending ended
2 s after it is done (RF 3; RF 2 for a reassignment, so each partition has a broker to move to). Achieved = messages
the bulk handed to the client / the seconds it took (the seed's stopwatch; the first sends, timed alone, apart). Target: >= 0.97 of the offered rate
in every run: an operation may hold acknowledgements back (its cost, which the lab reports), never the sends the
schedule asks for. Prints one line per run and the verdict.
"""

from __future__ import annotations

import argparse
import contextlib
import tempfile
from pathlib import Path

from kafkabench.cluster import EmbeddedCluster
from kafkabench.cluster.target import Target
from kafkabench.core.events import SILENT
from kafkabench.labs.delivery.run import run_delivery
from kafkabench.labs.delivery.scenario import DeliveryScenario

TARGET = 0.97
AFTER = 10_000  # acknowledged messages before the operation fires


def achieved(target: Target, client: str, rate: int, seconds: float, operation: str | None, work: Path) -> dict:
    reassigning = bool(operation and operation.startswith("reassign"))
    scenario = DeliveryScenario(
        clients=[client], modes=["async-close"], acks=["all"], idempotence=["on"], min_isr=[2], partitions=6,
        replication_factors=[2 if reassigning else 3], size=1024, rate=rate,
        count=int(rate * seconds) if operation is None else rate * 600,
        **({"operations": [operation], "fault_after": AFTER, "end_after_heal": 2, "faults_must_fire": True}
           if operation else {}))
    [run] = run_delivery(scenario, target, work / f"{client}-{operation or 'none'}".replace(",", "_"), SILENT).runs
    assert run.error is None and run.counters["lost"] == 0, (run.error, run.counters)
    sent, singles = run.counters["sent"], sum(name.startswith("single_") for name in run.timings)
    return {"sent": sent, "rate": (sent - singles) / (run.timings["bulk_ms"] / 1000)}  # the bulk's own sends


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", default="confluent,java")
    parser.add_argument("--rate", type=int, default=2000)
    parser.add_argument("--seconds", type=float, default=40)
    parser.add_argument("--operations", default="rolling-restart;rolling-restart,kill;reassign,from=1")
    args = parser.parse_args()
    operations = [None, *args.operations.split(";")]
    worst = 1.0
    with tempfile.TemporaryDirectory(prefix="kafkabench-operation-overhead-") as work, contextlib.ExitStack() as stack:
        cluster = stack.enter_context(EmbeddedCluster(brokers=3, controllers=1, directory=Path(work) / "cluster"))
        target = Target.embedded(cluster)
        for client in args.clients.split(","):
            for operation in operations:
                found = achieved(target, client, args.rate, args.seconds, operation, Path(work))
                ratio = found["rate"] / args.rate
                worst = min(worst, ratio)
                print(f"{client} {operation or 'no operation'}: {found['sent']:,} sent at {found['rate']:,.0f}/s of "
                      f"{args.rate:,} offered: {ratio:.3f}", flush=True)
    print(f"worst achieved / offered: {worst:.3f} (target >= {TARGET}: {'met' if worst >= TARGET else 'MISSED'})")


if __name__ == "__main__":
    main()

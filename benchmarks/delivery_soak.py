"""Soak: a million messages through ten leader faults, every one of them checked. Safe settings must lose
nothing; acks=1 shows what it loses.

    .venv/bin/python benchmarks/delivery_soak.py [--count 1000000] [--rate 10000] [--bounces 10]
        [--bounce-every 6] [--client confluent] [--no-checker-cost]

Starts its own embedded cluster (3 brokers beside a dedicated KRaft controller) and runs the delivery lab twice,
through the lab API, each on a fresh topic (4 partitions, replication factor 3), async-close, at --rate
messages/s on an open-loop schedule so the producer is still sending when the last fault fires:

- safe: acks=all, min.insync.replicas 2, idempotence on. Target: 0 acknowledged messages lost (and, since
  idempotence promises it, 0 duplicated and 0 reordered);
- acks=1: min.insync.replicas 1, idempotence off: what it loses, counted.

Faults: --bounces in all, the leader of partition 0 killed (kill -9, restarted 2 s later) and paused (SIGSTOP,
resumed 2 s later) in turn, the first 2 s in, then one every --bounce-every seconds (a restart that takes longer
delays the next; each fault's fired and healed times are printed). After each run the cluster is healed, the
topic read back read_committed and every message checked (a loss confirmed by a second read).

Then, unless --no-checker-cost, the checker's own cost: benchmarks/delivery_checker_cost.py on 10,000,000
synthetic messages (targets <= 30 s and <= 200 MB).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from kafkabench.cluster import EmbeddedCluster
from kafkabench.cluster.target import Target
from kafkabench.core.events import SILENT
from kafkabench.labs.base import LabFailed
from kafkabench.labs.delivery.report import verdict_of
from kafkabench.labs.delivery.run import run_delivery
from kafkabench.labs.delivery.scenario import DeliveryScenario
from kafkabench.labs.delivery.verdicts import verdict_lines

HERE = Path(__file__).parent
CELLS = {"safe": {"acks": ["all"], "min_isr": [2], "idempotence": ["on"]},
         "acks=1": {"acks": ["1"], "min_isr": [1], "idempotence": ["off"]}}
COLUMNS = ("sent", "acknowledged", "failed", "unknown", "lost", "duplicated", "reordered", "unknown_found",
           "unknown_not_found", "offset_mismatch")


def soak(target: Target, args, name: str, out: Path) -> None:
    scenario = DeliveryScenario(clients=[args.client], modes=["async-close"], count=args.count, rate=args.rate,
                                faults=["kill-leader:2", "pause-leader:2"], fault_at=2, bounces=args.bounces,
                                bounce_every=args.bounce_every, timeout=120, **CELLS[name])
    begun = time.monotonic()
    try:
        document = run_delivery(scenario, target, out, SILENT)
    except LabFailed as failed:
        document = failed.document
        print(f"{name}: the run did not finish: {failed}")
    run = document.runs[0]
    verdict = verdict_of(run)
    fired = [event for event in run.params.get("faults", []) if event.get("fired_s") is not None]
    print(f"\n{name}: {run.params['settings']} ({args.client}), {time.monotonic() - begun:.0f} s")
    print("  " + ", ".join(f"{column} {run.counters.get(column, 0):,}" for column in COLUMNS)
          + f", delivered {verdict.delivered_pct:.3f} %" if verdict else "  not checked")
    print(f"  faults fired: {len(fired)} of {args.bounces} "
          f"({sum(e['fault'] == 'kill-leader' for e in fired)} kills, {sum(e['fault'] == 'pause-leader' for e in fired)} pauses)")
    for event in run.params.get("faults", []):
        healed = f", healed {event['healed_s']:.1f} s" if event.get("healed_s") is not None else ""
        at = f"fired {event['fired_s']:.1f} s" if event.get("fired_s") is not None else "not fired"
        print(f"    {event['fault']} broker {event.get('broker')}: {at}{healed}{': ' + event['error'] if event.get('error') else ''}")
    if verdict:
        for line in verdict_lines(verdict, name):
            print(f"  {line}")
    if name == "safe" and verdict:
        met = verdict.lost == 0 and verdict.duplicated == 0 and verdict.reordered == 0 and len(fired) >= 10
        print(f"  target (0 lost, 0 duplicated, 0 reordered, >= 10 faults): {'met' if met else 'MISSED'}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=1_000_000)
    parser.add_argument("--rate", type=float, default=10_000)
    parser.add_argument("--bounces", type=int, default=10)
    parser.add_argument("--bounce-every", type=float, default=6.0)
    parser.add_argument("--client", default="confluent")
    parser.add_argument("--no-checker-cost", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="kafkabench-soak-") as work:
        with EmbeddedCluster(brokers=3, controllers=1, directory=Path(work) / "cluster") as cluster:
            target = Target.embedded(cluster)
            for name in CELLS:
                soak(target, args, name, Path(work) / name)
    if not args.no_checker_cost:
        print("\nthe checker's cost, 10,000,000 messages:")
        subprocess.run([sys.executable, str(HERE / "delivery_checker_cost.py")], check=False)


if __name__ == "__main__":
    main()

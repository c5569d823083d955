"""tune reaching past the client, on seed 000's image: the 1.3 MB value one at a time at 30 frames/s, confluent, with
the brokers' threads, socket buffers and G1 region size in the space beside the client's sockets and fetch wait.

    .venv/bin/python benchmarks/tune_brokers_image.py [--trials 16] [--final-runs 5]

The goal: the recommendation's e2e p50 at least 30 % below the default cluster's and clients' in the same run (the
tune's own final re-runs, interleaved), or the data that shows no such gain exists here. Prints the recommendation,
the default's and each finalist's re-runs, and where the e2e time went for the default and the recommendation.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
from pathlib import Path

from kafkabench.cluster import EmbeddedCluster
from kafkabench.cluster.target import Target
from kafkabench.core.events import Listener
from kafkabench.labs.broker_phases import text
from kafkabench.labs.latency.scenario import SEED_IMAGE_BYTES
from kafkabench.labs.tune.run import run_tune
from kafkabench.labs.tune.scenario import TuneScenario

SPACE = """\
description: seed 000's image at 30 frames/s - the client's sockets and fetch wait, the brokers' threads, sockets, heap
producer:
  send.buffer.bytes: {choices: [-1, 131072, 4194304]}
consumer:
  receive.buffer.bytes: {choices: [-1, 65536, 4194304]}
  fetch.max.wait.ms: {low: 1, high: 500, log: true}
broker:
  num.io.threads: {choices: [1, 2, 8]}
  num.network.threads: {choices: [1, 3]}
  socket.send.buffer.bytes: {choices: [-1, 102400]}
  socket.receive.buffer.bytes: {choices: [-1, 102400]}
jvm:
  "-XX:G1HeapRegionSize=": {choices: [default, 4m, 16m]}
"""
GOAL = 0.30


class Notes(Listener):
    def note(self, message: str) -> None:
        print(message, flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=16)
    parser.add_argument("--final-runs", type=int, default=5)
    parser.add_argument("--count", type=int, default=60)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="kafkabench-tune-image-") as work, \
            EmbeddedCluster(directory=Path(work) / "cluster") as cluster:
        space = Path(work) / "space.yaml"
        space.write_text(SPACE)
        scenario = TuneScenario(goal="latency", objective="p50", one_at_a_time=True, client="confluent",
                                size=SEED_IMAGE_BYTES, count=args.count, warmup=10, pause=1 / 30, trials=args.trials,
                                noise_runs=3, finalists=2, final_runs=args.final_runs, space=space, seed=7)
        document = run_tune(scenario, Target.embedded(cluster), Path(work) / "tune", Notes())
    params = document.params
    final = {entry["label"]: entry for entry in params["final"]}
    default = statistics.median(final["default"]["values"])
    print(f"\n1.3 MB image at 30 frames/s, confluent, {args.trials} trials, {args.final_runs} final re-runs each")
    for label, entry in final.items():
        median = statistics.median(entry["values"])
        print(f"  {label:>10}: e2e p50 median {median:.2f} ms (range {min(entry['values']):.2f}-"
              f"{max(entry['values']):.2f}), {median / default - 1:+.1%} against the default; {entry['settings']}")
    best = min(statistics.median(entry["values"]) for entry in final.values())
    print(f"  best finalist {1 - best / default:.1%} below the default (goal: {GOAL:.0%}: "
          f"{'met' if 1 - best / default >= GOAL else 'missed'})")
    print(f"  recommendation: {params['recommendation']['reason']}")
    for label, parts in (params.get("broker_phases") or {}).items():
        for line in text(label, parts):
            print(f"  {line}")


if __name__ == "__main__":
    main()

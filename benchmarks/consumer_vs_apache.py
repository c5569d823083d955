"""kafkabench consume against Apache's ConsumerPerformance: records/s ratios, side by side in one run.

    .venv/bin/python benchmarks/consumer_vs_apache.py [--client java] [--repeats 3]

One embedded broker; a 2-partition topic filled once per case (100 B and 1 MB records, written with acks=1
and with acks=all: the consumers read the same bytes either way), then kafkabench (same client settings as
Apache's tool), kafkabench with its recommended settings, and Apache each read all of it in a new group,
in interleaved repeats (the order rotates). Prints median records/s and the ratios kafkabench / Apache.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import uuid
from pathlib import Path

from kafkabench.cluster import EmbeddedCluster
from kafkabench.cluster.target import Target
from kafkabench.config.properties import parse_overrides
from kafkabench.core.events import SILENT
from kafkabench.labs.throughput import apache as apache_perf
from kafkabench.labs.throughput.plan import plan_throughput
from kafkabench.labs.throughput.run import run_throughput
from kafkabench.labs.throughput.scenario import ConsumeScenario, ProduceScenario

CASES = [(100, 1_000_000), (1_048_576, 400)]
# what kafkabench recommends for consuming throughput: bigger fetches, one consumer per partition
RECOMMENDED = {"overrides": ["max.partition.fetch.bytes=8388608", "fetch.min.bytes=65536", "fetch.max.wait.ms=100"],
               "consumers": 2}


def fill(target, client, topic, size, count, acks, out: Path) -> None:
    scenario = ProduceScenario(topic=topic, partitions=2, size=size, count=count, acks=acks,
                               client=client, producers=2, interval=5,
                               overrides=parse_overrides(["linger.ms=10", "batch.size=262144"]))
    run_throughput(scenario, target, out, SILENT)


def consume_scenario(client, topic, count, recommended: bool) -> ConsumeScenario:
    extra = RECOMMENDED if recommended else {"overrides": [], "consumers": 1}
    return ConsumeScenario(topic=topic, count=count, client=client, consumers=extra["consumers"],
                           overrides=parse_overrides(extra["overrides"]), interval=5, group=f"bench-{uuid.uuid4().hex[:8]}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--client", default="java")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory(prefix="kafkabench-bench-") as tmp, \
            EmbeddedCluster(brokers=1, directory=Path(tmp) / "cluster") as cluster:
        target = Target.embedded(cluster)
        for size, count in CASES:
            for acks in ("1", "all"):
                topic = f"bench-consume-{size}-{acks}-{uuid.uuid4().hex[:6]}"
                fill(target, args.client, topic, size, count, acks, Path(tmp) / f"fill-{topic}")
                settings = plan_throughput(consume_scenario(args.client, topic, count, False), SILENT).settings.values("consumer")
                settings.pop("group.id")
                same, recommended, apache = [], [], []
                for repeat in range(args.repeats):
                    order = ["same", "recommended", "apache"]
                    for which in order[repeat % 3:] + order[:repeat % 3]:
                        if which == "apache":
                            apache.append(apache_perf.consumer_performance(
                                cluster.bootstrap_servers, topic, count, f"bench-apache-{uuid.uuid4().hex[:8]}", settings).records_per_s)
                            continue
                        scenario = consume_scenario(args.client, topic, count, which == "recommended")
                        document = run_throughput(scenario, target, Path(tmp) / f"{topic}-{repeat}-{which}", SILENT)
                        (same if which == "same" else recommended).append(document.runs[0].throughput["records_per_s"])
                row = (size, acks, statistics.median(same), statistics.median(recommended), statistics.median(apache))
                rows.append(row)
                print(f"{size:>9} B acks={acks:3}  kafkabench {row[2]:>10,.0f}  recommended {row[3]:>10,.0f}  "
                      f"Apache {row[4]:>10,.0f} records/s", flush=True)
    print(f"\nkafkabench ({args.client} client) / Apache ConsumerPerformance, records/s, median of {args.repeats} interleaved repeats")
    print(f"{'record':>9} {'acks':>4}  {'same settings':>13}  {'recommended':>11}")
    for size, acks, same, recommended, apache in rows:
        print(f"{size:>9} {acks:>4}  {same / apache:>13.2f}  {recommended / apache:>11.2f}")
    print(f"recommended = {' '.join('-X ' + o for o in RECOMMENDED['overrides'])} --consumers {RECOMMENDED['consumers']}")


if __name__ == "__main__":
    main()

"""kafkabench produce against Apache's ProducerPerformance: records/s ratios, side by side in one run.

    .venv/bin/python benchmarks/producer_vs_apache.py [--client java] [--repeats 3] [--rss]

One embedded broker; for 100 B and 1 MB records, acks=1 and acks=all: kafkabench with the same client
settings as Apache's tool, then kafkabench with its recommended settings, and Apache, in interleaved
repeats (the order rotates every repeat). Prints the median records/s of each and the ratios
kafkabench / Apache. `--rss`: peak RSS of one producer worker for 1e5 vs 1e7 records.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import uuid
from pathlib import Path

from kafkabench.admin import KafkaAdmin
from kafkabench.cluster import EmbeddedCluster
from kafkabench.cluster.target import Target
from kafkabench.config.properties import parse_overrides
from kafkabench.core.events import SILENT
from kafkabench.labs.throughput import apache as apache_perf
from kafkabench.labs.throughput.plan import plan_throughput
from kafkabench.labs.throughput.run import run_throughput
from kafkabench.labs.throughput.scenario import ProduceScenario

CASES = [(100, 1_000_000), (1_048_576, 400)]  # (record size, records per run)
# what kafkabench recommends for throughput: let batches fill, two producer processes. No compression: the
# values are incompressible (like images), where a codec costs CPU and saves nothing (the compression lab)
RECOMMENDED = {"overrides": ["linger.ms=10", "batch.size=262144"], "producers": 2}


def kafkabench_once(target, client, size, count, acks, out: Path, recommended: bool) -> float:
    extra = RECOMMENDED if recommended else {"overrides": [], "producers": 1}
    scenario = ProduceScenario(size=size, count=count, acks=acks, client=client,
                               producers=extra["producers"], overrides=parse_overrides(extra["overrides"]), interval=5)
    document = run_throughput(scenario, target, out, SILENT)
    return document.runs[0].throughput["records_per_s"]


def apache_once(bootstrap, size, count, producer_settings) -> float:
    topic = f"bench-apache-{uuid.uuid4().hex[:8]}"
    with KafkaAdmin(bootstrap) as admin:
        admin.create_topic(topic, config={"max.message.bytes": str(size + 1024)} if size > 1_000_000 else None)
        try:
            return apache_perf.producer_performance(bootstrap, topic, count, size, -1, producer_settings).records_per_s
        finally:
            admin.delete_topic(topic)


def rss_check(target, client, out: Path) -> None:
    print("\npeak RSS of one producer worker (100 B records, as fast as possible):")
    peaks = {}
    for count in (100_000, 10_000_000):
        scenario = ProduceScenario(size=100, count=count, acks="1", client=client, interval=5)
        document = run_throughput(scenario, target, out / f"rss-{count}", SILENT)
        peaks[count] = document.runs[0].resources["max_rss_mb"]
        print(f"  {count:>10,} records: {peaks[count]:.1f} MB  ({document.runs[0].throughput['records_per_s']:,.0f} records/s)")
    print(f"  ratio 1e7 / 1e5: {peaks[10_000_000] / peaks[100_000]:.2f} (target <= 1.2)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--client", default="java")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--rss", action="store_true")
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory(prefix="kafkabench-bench-") as tmp, \
            EmbeddedCluster(brokers=1, directory=Path(tmp) / "cluster") as cluster:
        target = Target.embedded(cluster)
        kafkabench_once(target, args.client, 100, 200_000, "1", Path(tmp) / "warm-up", False)  # the broker's JIT warms up
        for size, count in CASES:
            for acks in ("1", "all"):
                same, recommended, apache = [], [], []
                same_scenario = ProduceScenario(size=size, count=count, acks=acks, client=args.client)
                settings = plan_throughput(same_scenario, SILENT).settings.values("producer")  # what Apache gets too
                for repeat in range(args.repeats):
                    order = ["same", "recommended", "apache"]
                    order = order[repeat % 3:] + order[:repeat % 3]
                    for which in order:
                        out = Path(tmp) / f"{size}-{acks}-{repeat}-{which}"
                        if which == "apache":
                            apache.append(apache_once(cluster.bootstrap_servers, size, count, settings))
                        else:
                            rate = kafkabench_once(target, args.client, size, count, acks, out, which == "recommended")
                            (same if which == "same" else recommended).append(rate)
                row = (size, acks, statistics.median(same), statistics.median(recommended), statistics.median(apache))
                rows.append(row)
                print(f"{size:>9} B acks={acks:3}  kafkabench {row[2]:>10,.0f}  recommended {row[3]:>10,.0f}  "
                      f"Apache {row[4]:>10,.0f} records/s", flush=True)
        if args.rss:
            rss_check(target, args.client, Path(tmp))
    print(f"\nkafkabench ({args.client} client) / Apache ProducerPerformance, records/s, median of {args.repeats} interleaved repeats")
    print(f"{'record':>9} {'acks':>4}  {'same settings':>13}  {'recommended':>11}")
    for size, acks, same, recommended, apache in rows:
        print(f"{size:>9} {acks:>4}  {same / apache:>13.2f}  {recommended / apache:>11.2f}")
    print(f"recommended = {' '.join('-X ' + o for o in RECOMMENDED['overrides'])} --producers {RECOMMENDED['producers']}")


if __name__ == "__main__":
    main()

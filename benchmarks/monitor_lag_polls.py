"""What one poll of the monitor's lag part costs with many consumer groups: the collector as it is (every group's
committed offsets and members asked at once: one OffsetFetch and one DescribeGroups per coordinator) against the same
poll asking group by group, as it did before, on one broker holding --groups groups that each committed an offset.

    .venv/bin/python benchmarks/monitor_lag_polls.py [--groups 100] [--polls 10] [--rounds 3] [-b HOST:PORT]

Each round runs --polls polls of each kind in turn (which first alternates), after one discarded poll of each. Printed
per kind: the medians over the rounds of this process's CPU per poll, the poll's time and the broker's CPU per poll
(embedded broker only), then the ratios batched / per group (below 1.0: batched needs less). Both kinds must report
the same lag for every group, or the benchmark stops.
"""

from __future__ import annotations

import argparse
import contextlib
import tempfile
import time
import uuid
from pathlib import Path

import confluent_kafka
from confluent_kafka import Consumer, KafkaException, TopicPartition

from kafkabench.admin import KafkaAdmin
from kafkabench.cluster import EmbeddedCluster
from kafkabench.connection import Connection
from kafkabench.labs.monitor.lag_collector import MONITOR_GROUPS, LagCollector
from kafkabench.labs.monitor.metrics import Recorder
from kafkabench.waiting import wait_until
from harness import cpu_s, fill, print_medians

FIGURES = ("cpu ms/poll", "poll ms", "broker ms/poll")


class PerGroupCollector(LagCollector):
    """The reference: committed offsets and members asked one group at a time, as the lag part did before."""

    def _ask_all(self, groups, ask):
        return self._ask_each(groups, ask)


def committed_groups(bootstrap: str, topic: str, count: int) -> list[str]:
    """`count` groups, each having committed offset `n` of partition 0 (so each has its own lag)."""
    prefix = f"bench-lag-{uuid.uuid4().hex[:6]}"
    groups = [f"{prefix}-{n:04d}" for n in range(count)]
    for n, group in enumerate(groups):
        consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group, "enable.auto.commit": False})
        wait_until(lambda: _committed(consumer, TopicPartition(topic, 0, n % 100)), timeout_s=60,
                   what=f"group {group} to commit")  # a fresh broker's offsets topic loads first
        consumer.close()
    return groups


def _committed(consumer: Consumer, offset: TopicPartition) -> bool:
    try:
        consumer.commit(offsets=[offset], asynchronous=False)
        return True
    except KafkaException as exc:
        if exc.args[0].code() != confluent_kafka.KafkaError.COORDINATOR_LOAD_IN_PROGRESS:
            raise
        return False


def polls(collector: LagCollector, count: int, broker_pids: list[int]) -> tuple[dict[str, float], dict]:
    """`count` polls: this process's CPU and the time per poll, the broker's CPU per poll, and the last poll's lags."""
    began_cpu, began_broker, began = time.process_time(), cpu_s(broker_pids), time.perf_counter()
    for _ in range(count):
        found = collector.collect(time.monotonic())
    took = time.perf_counter() - began
    return ({"cpu ms/poll": 1000 * (time.process_time() - began_cpu) / count, "poll ms": 1000 * took / count,
             "broker ms/poll": 1000 * (cpu_s(broker_pids) - began_broker) / count},
            {group: lag.lag for group, lag in found.items()})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--groups", type=int, default=100)
    parser.add_argument("--polls", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("-b", "--bootstrap-servers")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="kafkabench-lag-") as work, contextlib.ExitStack() as stack:
        if args.bootstrap_servers:
            connection, broker_pids = Connection(args.bootstrap_servers), []
        else:
            cluster = stack.enter_context(EmbeddedCluster(brokers=1, directory=Path(work) / "cluster"))
            connection, broker_pids = cluster.connection, [node.pid for node in cluster.state.nodes]
        topic = f"bench-lag-{uuid.uuid4().hex[:8]}"
        with KafkaAdmin(connection) as admin:
            admin.create_topic(topic, 1, 1)
        fill(connection.bootstrap_servers, topic, 200, 100)
        groups = committed_groups(connection.bootstrap_servers, topic, args.groups)
        pattern = [f"^{groups[0].rsplit('-', 1)[0]}-"]
        kinds = {"batched": LagCollector, "per group": PerGroupCollector}
        collectors = {kind: cls(connection, pattern, MONITOR_GROUPS, 10, Recorder())
                      for kind, cls in kinds.items()}
        try:
            for collector in collectors.values():
                collector.collect(time.monotonic())
            results: dict[str, list[dict[str, float]]] = {kind: [] for kind in kinds}
            for round_ in range(args.rounds):
                order = list(kinds) if round_ % 2 == 0 else list(reversed(kinds))
                lags = {}
                for kind in order:
                    figures, lags[kind] = polls(collectors[kind], args.polls, broker_pids)
                    results[kind].append(figures)
                if lags["batched"] != lags["per group"] or len(lags["batched"]) != args.groups:
                    raise SystemExit(f"the two kinds disagree: {len(lags['batched'])} against "
                                     f"{len(lags['per group'])} groups, or their lags differ")
                print(f"round {round_ + 1}: " + ", ".join(
                    f"{kind} {results[kind][-1]['cpu ms/poll']:.1f} CPU ms/poll" for kind in kinds), flush=True)
        finally:
            for collector in collectors.values():
                collector.close()
        print(f"\n{args.groups} groups, {args.polls} polls a round, {args.rounds} rounds")
        print_medians(results, FIGURES, "batched", "per group")


if __name__ == "__main__":
    main()

"""What Kafka's 50-partition internal topics cost a cluster that tests: 3 brokers (C1 only, fast failover, as the
suite's and the pytest plugin's) with Kafka's defaults against the same with SMALL_INTERNAL_TOPICS (5 partitions).

    .venv/bin/python benchmarks/small_internal_topics.py [--rounds 3]

Each round starts a cluster of each kind in turn (interleaved, so machine drift hits both alike) and times two steps,
with the brokers' CPU over each:
    first use   a consumer group reads a record a transaction committed: __consumer_offsets and __transaction_state
                are created and their coordinators loaded
    failover    the broker leading the group's coordinator partition is killed (-9) and restarted; ends when a new
                transaction commits and the group commits its offset again
Printed: medians per kind and the ratios small / Kafka's (below 1.0: the small topics cost less).
"""

from __future__ import annotations

import argparse
import tempfile
import time
import uuid
from pathlib import Path

import psutil
from confluent_kafka import Consumer, KafkaException, Producer

from kafkabench.admin import KafkaAdmin, quiet_client_config
from kafkabench.cluster import EmbeddedCluster
from kafkabench.cluster.embedded import FAST_FAILOVER, SHORT_LIVED_JVM_OPTIONS, SMALL_INTERNAL_TOPICS
from kafkabench.waiting import wait_until
from harness import print_medians

KINDS = {"kafka's": {}, "small": SMALL_INTERNAL_TOPICS}
FIGURES = ("first use s", "first use cpu s", "failover s", "failover cpu s")
GROUP = "benchmark-group"


def java_hash(text: str) -> int:
    value = 0
    for char in text:
        value = (31 * value + ord(char)) & 0xFFFFFFFF
    return value - (1 << 32) if value >= 1 << 31 else value


def one(settings: dict[str, str]) -> dict[str, float]:
    with tempfile.TemporaryDirectory(prefix="kafkabench-internal-") as name, \
            EmbeddedCluster(brokers=3, directory=Path(name) / "cluster", jvm_options=SHORT_LIVED_JVM_OPTIONS,
                            broker_config_overrides={**FAST_FAILOVER, **settings}) as cluster:

        def cpu() -> dict[int, float]:
            return {node.pid: sum(psutil.Process(node.pid).cpu_times()[:2]) for node in cluster.status().brokers
                    if node.pid is not None}

        def since(before: dict[int, float]) -> float:
            """The brokers' CPU since `before`; a broker restarted since counts from its start."""
            return sum(seconds - before.get(pid, 0.0) for pid, seconds in cpu().items())

        topic = f"records-{uuid.uuid4().hex[:8]}"
        with KafkaAdmin(cluster.bootstrap_servers) as admin:
            admin.create_topic(topic, partitions=1, replication_factor=3)
        config = quiet_client_config(cluster.bootstrap_servers)
        consumer = Consumer({**config, "group.id": GROUP, "auto.offset.reset": "earliest",
                             "enable.auto.commit": False, "isolation.level": "read_committed"})
        producer = Producer({**config, "transactional.id": "benchmark"})

        def transaction_read_and_committed() -> bool:
            producer.begin_transaction()
            producer.produce(topic, b"x")
            producer.commit_transaction(60)
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                message = consumer.poll(0.5)
                if message is not None and message.error() is None:
                    consumer.commit(message, asynchronous=False)
                    return True
            return False

        def retried() -> bool:
            try:
                return transaction_read_and_committed()
            except KafkaException as failure:
                if failure.args[0].txn_requires_abort():
                    producer.abort_transaction(60)
                return False

        try:
            began, before = time.monotonic(), cpu()
            producer.init_transactions(60)
            consumer.subscribe([topic])
            if not transaction_read_and_committed():
                raise SystemExit("the first record was not read within 60 s")
            first_s, first_cpu = time.monotonic() - began, since(before)
            coordinator = cluster.leader_of("__consumer_offsets",
                                            abs(java_hash(GROUP)) % int(settings.get("offsets.topic.num.partitions", 50)))
            began, before = time.monotonic(), cpu()
            cluster.kill_broker(coordinator)
            cluster.restart_broker(coordinator)
            wait_until(retried, timeout_s=120, what="a transaction and a group commit after the failover")
            return {"first use s": first_s, "first use cpu s": first_cpu,
                    "failover s": time.monotonic() - began, "failover cpu s": since(before)}
        finally:
            consumer.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    options = parser.parse_args()
    results: dict[str, list[dict[str, float]]] = {kind: [] for kind in KINDS}
    for round_ in range(options.rounds):
        for kind, settings in KINDS.items():
            results[kind].append(one(settings))
            print(f"round {round_ + 1}/{options.rounds} {kind:>7}: " +
                  ", ".join(f"{figure} {results[kind][-1][figure]:.2f}" for figure in FIGURES), flush=True)
    print_medians(results, FIGURES, "small", "kafka's")
    print(f"\nmedians of {options.rounds} interleaved rounds; small: {SMALL_INTERNAL_TOPICS}")


if __name__ == "__main__":
    main()

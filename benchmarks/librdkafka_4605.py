"""Reproduces librdkafka issue 4605, the abort that killed `kafkabench monitor` under a paused broker, and shows
that the monitor's way of asking the same questions survives it.

    .venv/bin/python benchmarks/librdkafka_4605.py [--groups 30] [--seconds 90] [--ask librdkafka,kafka-python]

The bug (open upstream; fix proposed in librdkafka PR 5397): a coordinator-bound admin request
(DescribeConsumerGroups, ListConsumerGroupOffsets, DeleteConsumerGroups) whose coordinator connection is down when
the request is built frees its enq-once object, then uses it: `rd_kafka_enq_once_del_source_return: Assertion
'eonce->refcnt > 0' failed` and SIGABRT, or a segfault.

Starts 3 brokers beside a dedicated controller, commits offsets for --groups consumer groups (spread over the
brokers as coordinators), then, for each --ask client, runs a child process that asks those questions of every
group in a loop, as the monitor's lag collector did, while this script pauses a broker for 20 s, resumes it, kills
another and restarts it, until --seconds. Printed per client: how the child ended (exited 0 at the end, or the signal
that killed it, with its last stderr line) and the rounds it had completed by then.
"""

from __future__ import annotations

import argparse
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

QUESTION_TIMEOUT_S = 3.0


def ask_librdkafka(bootstrap: str, groups: list[str], deadline: float, done) -> None:
    from confluent_kafka import ConsumerGroupTopicPartitions, KafkaException
    from confluent_kafka.admin import AdminClient

    admin = AdminClient({"bootstrap.servers": bootstrap, "log_level": 0})
    rounds = 0
    while time.monotonic() < deadline:
        for group in groups:
            try:
                admin.list_consumer_group_offsets([ConsumerGroupTopicPartitions(group)],
                                                  request_timeout=QUESTION_TIMEOUT_S)[group].result()
            except KafkaException:
                pass
        for future in admin.describe_consumer_groups(groups, request_timeout=QUESTION_TIMEOUT_S).values():
            try:
                future.result()
            except KafkaException:
                pass
        rounds += 1
        done(rounds)


def ask_kafka_python(bootstrap: str, groups: list[str], deadline: float, done) -> None:
    from kafka.admin import KafkaAdminClient
    from kafka.errors import KafkaError

    admin = KafkaAdminClient(bootstrap_servers=bootstrap.split(","), request_timeout_ms=int(QUESTION_TIMEOUT_S * 1000))
    rounds = 0
    while time.monotonic() < deadline:
        for group in groups:
            try:
                admin.list_group_offsets(group)
            except KafkaError:
                pass
        try:
            admin.describe_groups(groups)
        except KafkaError:
            pass
        rounds += 1
        done(rounds)


ASK = {"librdkafka": ask_librdkafka, "kafka-python": ask_kafka_python}


def child(args) -> None:
    begun = time.monotonic()
    ASK[args.child](args.bootstrap, args.group_names.split(","), begun + args.seconds,
                    lambda rounds: print(f"{rounds} rounds in {time.monotonic() - begun:.1f} s", flush=True))


def commit_groups(bootstrap: str, topic: str, count: int) -> list[str]:
    from confluent_kafka import Consumer, TopicPartition

    names = [f"repro-4605-{i}" for i in range(count)]
    for name in names:
        consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": name, "enable.auto.commit": False})
        consumer.commit(offsets=[TopicPartition(topic, 0, 1)], asynchronous=False)
        consumer.close()
    return names


def faults(cluster, until: float) -> None:
    """Pause a broker 20 s, resume, kill another, restart it 10 s later; again until `until`."""
    victims = cluster.broker_ids()
    step = 0
    while time.monotonic() < until - 5:
        broker = victims[step % len(victims)]
        if step % 2 == 0:
            print(f"  pause broker {broker} for 20 s")
            cluster.pause_broker(broker)
            _sleep_until(min(until, time.monotonic() + 20))
            cluster.resume_broker(broker)
        else:
            print(f"  kill broker {broker}, restart 10 s later")
            cluster.kill_broker(broker)
            _sleep_until(min(until, time.monotonic() + 10))
            cluster.restart_broker(broker)
        step += 1
        _sleep_until(min(until, time.monotonic() + 5))


def _sleep_until(when: float) -> None:
    time.sleep(max(0.0, when - time.monotonic()))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--groups", type=int, default=30)
    parser.add_argument("--seconds", type=float, default=90)
    parser.add_argument("--ask", default="librdkafka,kafka-python")
    parser.add_argument("--child", choices=sorted(ASK), help=argparse.SUPPRESS)
    parser.add_argument("--bootstrap", help=argparse.SUPPRESS)
    parser.add_argument("--group-names", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args)
        return

    from kafkabench.admin import KafkaAdmin
    from kafkabench.cluster import EmbeddedCluster
    from kafkabench.cluster.faults import EmbeddedFaults

    with tempfile.TemporaryDirectory() as tmp, EmbeddedCluster(brokers=3, controllers=1, directory=Path(tmp)) as cluster:
        bootstrap = cluster.bootstrap_servers
        with KafkaAdmin(bootstrap) as admin:
            admin.create_topic("repro-4605", partitions=1, replication_factor=3)
        groups = commit_groups(bootstrap, "repro-4605", args.groups)
        for client in args.ask.split(","):
            print(f"{client}: {args.groups} groups asked about in a loop for {args.seconds:.0f} s under faults")
            asking = subprocess.Popen([sys.executable, __file__, "--child", client, "--bootstrap", bootstrap,
                                       "--group-names", ",".join(groups), "--seconds", str(args.seconds)],
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            try:
                faults(cluster, time.monotonic() + args.seconds)
                stdout, stderr = asking.communicate(timeout=args.seconds + 60)
            finally:
                if asking.poll() is None:
                    asking.kill()
                EmbeddedFaults(cluster).bring_back()
                EmbeddedFaults(cluster).wait_healthy(120, topics=[])
            ended = (f"killed by {signal.Signals(-asking.returncode).name}" if asking.returncode < 0
                     else f"exited {asking.returncode}")
            last = (stderr.strip().splitlines() or [""])[-1][:200]
            progress = (stdout.strip().splitlines() or ["no round completed"])[-1]
            print(f"{client}: {ended} after {progress}" + (f"; last stderr: {last}" if last else ""))


if __name__ == "__main__":
    main()

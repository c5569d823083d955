"""Does a groups lab member read at the client's own speed? kafkabench's delivery_consumer worker in commit-after mode
(what `kafkabench groups` runs: each record processed and recorded with its times in a mapped history, each batch
committed after) / a minimal commit-after loop of the same client; with --mode share, a share group's member (its
delivery counts stored too, each record accepted, each poll's acknowledgements committed) / a minimal share loop
(benchmarks/minimal_confluent_share.py, MinimalJavaShare.java).

    .venv/bin/python benchmarks/group_member_overhead.py [--clients confluent,java] [--count 200000] [--size 64]
        [--batch 500] [--repeats 3] [--mode commit-after|share] [--bootstrap-servers HOST:PORT]

One embedded broker (or --bootstrap-servers). A topic of 4 partitions is filled once with --count delivery ids; then
for each client, kafkabench's member (one worker, started by the lab's launcher, in a group of its own) and the client's
minimal loop (benchmarks/minimal_confluent_commit_after.py, MinimalJavaCommitAfter.java: no kafkabench code) take turns reading the whole backlog, one discarded
pass of each, then --repeats in ABBA order. records/s = count / (the first poll that returned records -> the last
commit returned), as each measures itself. Prints each repeat, the medians and the ratio kafkabench / minimal (median
of the per-repeat ratios); target >= 0.90. A backlog rather than the lab's steady rate: at a rate both keep up with,
the ratio would be 1 by construction.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import statistics
import subprocess
import sys
import tempfile
import uuid
from pathlib import Path

from kafkabench.admin import KafkaAdmin
from kafkabench.cluster.target import Target
from kafkabench.core.protocol import DeliveryConsumerParams, Task, task_params

from harness import consumer_result, filled_topic, interleaved, java_loop_command, open_target

HERE = Path(__file__).parent
TARGET = 0.90
READ_S = 600  # a read that takes longer than this has hung


def new_group(target: Target, side: str, mode: str) -> str:
    """A group of its own for each pass; a share group's read from the beginning (its default is the latest offset)."""
    group = f"{side}-{uuid.uuid4().hex[:8]}"
    if mode == "share":
        with KafkaAdmin(target.connection) as admin:
            admin.set_group_config(group, {"share.auto.offset.reset": "earliest"})
    return group


def kafkabench_rate(target: Target, client: str, topic: str, count: int, batch: int, work: Path, mode: str) -> float:
    group = new_group(target, "member", mode)
    result = consumer_result(target, Task(
        scenario="delivery_consumer", client=client, bootstrap_servers=target.bootstrap_servers, topic=topic,
        timeout_s=60, params=task_params(DeliveryConsumerParams(mode=mode, group=group, count=count,
                                                                batch=batch, history_dir=str(work / group)))),
        count, READ_S)
    return count / result.duration_s


def minimal_rate(target: Target, client: str, topic: str, count: int, batch: int, work: Path, mode: str) -> float:
    name = {"commit-after": ("MinimalJavaCommitAfter", "minimal_confluent_commit_after.py"),
            "share": ("MinimalJavaShare", "minimal_confluent_share.py")}[mode]
    loop = java_loop_command(name[0], work) if client == "java" else [sys.executable, str(HERE / name[1])]
    done = subprocess.run([*loop, target.bootstrap_servers, topic, new_group(target, "minimal", mode), str(batch), str(count)],
                          capture_output=True, text=True, check=True, timeout=READ_S)
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["records"] == count, report
    return count / report["seconds"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", default="confluent,java")
    parser.add_argument("--count", type=int, default=200_000)
    parser.add_argument("--size", type=int, default=64)
    parser.add_argument("--batch", type=int, default=500)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--mode", choices=("commit-after", "share"), default="commit-after")
    parser.add_argument("--bootstrap-servers")
    args = parser.parse_args()
    with contextlib.ExitStack() as stack:
        work = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="kafkabench-member-overhead-")))
        target = open_target(stack, args.bootstrap_servers, work)
        topic = stack.enter_context(filled_topic(target, "member-input", args.count, args.size))
        for client in args.clients.split(","):
            compare(client, target, topic, args, work)


def compare(client: str, target: Target, topic: str, args, work: Path) -> None:
    sides = {"kafkabench": lambda: kafkabench_rate(target, client, topic, args.count, args.batch, work, args.mode),
             "minimal": lambda: minimal_rate(target, client, topic, args.count, args.batch, work, args.mode)}
    rates, ratio = interleaved(client, sides, args.repeats)
    print(f"{client} {args.mode} member, {args.count:,} x {args.size} B in polls of <= {args.batch}: kafkabench "
          f"{statistics.median(rates['kafkabench']):,.0f} records/s, minimal {statistics.median(rates['minimal']):,.0f} "
          f"records/s, ratio {ratio:.2f} (target >= {TARGET:.2f}: {'met' if ratio >= TARGET else 'MISSED'})")


if __name__ == "__main__":
    main()

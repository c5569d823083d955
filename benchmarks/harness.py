"""What the kafkabench-side benchmarks share: the cluster they measure on, an input topic filled with delivery ids, a
minimal Java loop compiled and started as
kafkabench's Java worker is (its JVM flags, the pinned Kafka jars), a consumer worker run to its result, the
kafkabench-against-minimal comparison in ABBA order, a produce run's cost to the brokers, and a table of medians."""

from __future__ import annotations

import contextlib
import json
import os
import statistics
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Callable

import psutil
from confluent_kafka import Producer

from kafkabench.admin import KafkaAdmin
from kafkabench.cluster import EmbeddedCluster
from kafkabench.cluster.artifacts import JarCache
from kafkabench.cluster.java import find_java
from kafkabench.cluster.target import Target
from kafkabench.core import delivery_ids as ids
from kafkabench.core.protocol import Finish, Progress, Ready, Result, Start, Task
from kafkabench.workers.java_build import JVM_FLAGS

HERE = Path(__file__).parent
PARTITIONS = 4  # of an input topic


def open_target(stack: contextlib.ExitStack, bootstrap_servers: str | None, work: Path) -> Target:
    """The cluster given, or a one-broker embedded one in `work`, stopped with `stack`."""
    if bootstrap_servers:
        return Target.external(bootstrap_servers)
    return Target.embedded(stack.enter_context(EmbeddedCluster(brokers=1, directory=work / "cluster")))


@contextlib.contextmanager
def filled_topic(target: Target, prefix: str, count: int, size: int):
    """A fresh topic of PARTITIONS named `prefix`-..., filled with `count` delivery ids of `size` bytes (producer 0),
    deleted afterwards."""
    topic = f"{prefix}-{uuid.uuid4().hex[:8]}"
    with KafkaAdmin(target.connection) as admin:
        admin.create_topic(topic, PARTITIONS, 1)
    try:
        fill(target.bootstrap_servers, topic, count, size)
        yield topic
    finally:
        with KafkaAdmin(target.connection) as admin:
            admin.delete_topic(topic)


def fill(bootstrap: str, topic: str, count: int, size: int) -> None:
    producer = Producer({"bootstrap.servers": bootstrap, "enable.idempotence": True, "linger.ms": 20})
    for sequence in range(count):
        while True:
            try:
                producer.produce(topic, ids.encode(0, sequence, size))
                break
            except BufferError:
                producer.poll(0.05)
    assert producer.flush(120) == 0


def java_loop_command(class_name: str, work: Path) -> list[str]:
    """The argv of benchmarks/CLASS_NAME.java, compiled into `work` on first use."""
    java, jars = find_java(), os.pathsep.join(str(jar) for jar in JarCache().ensure())
    classes = work / "minimal-java"
    if not (classes / f"{class_name}.class").exists():
        subprocess.run([str(java.javac), "-cp", jars, "-d", str(classes), str(HERE / f"{class_name}.java")],
                       check=True, timeout=300)
    return [str(java.executable), *JVM_FLAGS, "-cp", f"{jars}{os.pathsep}{classes}", class_name]


def consumer_result(target: Target, task: Task, count: int, bound_s: float) -> Result:
    """A kafkabench consumer worker (the delivery_consumer scenario) given `task`, told to go, told to finish once its
    progress says `count` records committed, and its result; all within `bound_s`."""
    worker = target.launcher.start(f"{task.params['mode']} {task.client}", task.client)
    try:
        worker.send(task)
        worker.receive(Ready, timeout_s=120)
        worker.send(Start())
        deadline, committed = time.monotonic() + bound_s, 0
        while committed < count and time.monotonic() < deadline:
            message = worker.next_message(0.2)
            if isinstance(message, Progress):
                committed = message.acked or 0
        worker.send(Finish())
        result = None
        while not isinstance(result, Result) and time.monotonic() < deadline:
            result = worker.next_message(0.2)
    finally:
        worker.stop()
    assert isinstance(result, Result) and result.counters["processed"] == count, result
    return result


def interleaved(label: str, sides: dict[str, Callable[[], float]], repeats: int) -> tuple[dict[str, list[float]], float]:
    """Each side's rate: one discarded pass of each (broker JIT, page cache), then `repeats` in ABBA order, each repeat
    printed; the rates, and the median of the per-repeat ratios kafkabench / minimal."""
    for run in sides.values():
        run()
    rates: dict[str, list[float]] = {name: [] for name in sides}
    for repeat in range(repeats):
        for name in (list(sides) if repeat % 2 == 0 else list(reversed(sides))):
            rates[name].append(sides[name]())
        print(f"{label} repeat {repeat + 1}: " + ", ".join(f"{name} {rates[name][-1]:,.0f} records/s" for name in sides),
              flush=True)
    return rates, statistics.median(ours / theirs for ours, theirs in zip(rates["kafkabench"], rates["minimal"]))


def cpu_s(pids: list[int]) -> float:
    """User + system CPU seconds the processes have used so far."""
    return sum(t.user + t.system for t in (psutil.Process(pid).cpu_times() for pid in pids))


def brokers_cpu_s(cluster: EmbeddedCluster) -> float:
    """User + system CPU seconds the cluster's node processes have used so far."""
    return cpu_s([node.pid for node in cluster.state.nodes])


def produce_on(cluster: EmbeddedCluster, out: Path, seconds: float, rate: int) -> dict[str, float]:
    """`kafkabench produce` for `seconds` at `rate` records/s of 1,000 bytes (RF 3, one consumer) on `cluster`: its
    brokers' CPU over the run and the run's publish latency."""
    started = brokers_cpu_s(cluster)
    done = subprocess.run([sys.executable, "-m", "kafkabench", "produce", "-b", cluster.bootstrap_servers,
                           "--rate", str(rate), "--duration", str(seconds), "--size", "1000",
                           "--replication-factor", "3", "--consumers", "1", "--out", str(out)],
                          capture_output=True, text=True, timeout=seconds * 10 + 120)
    if done.returncode != 0:
        raise SystemExit(f"kafkabench produce failed: {done.stderr.strip()[-400:]}")
    publish = json.loads((out / "result.json").read_text())["runs"][0]["stats"]["publish_latency"]
    return {"run cpu s": brokers_cpu_s(cluster) - started, "publish p50 ms": publish["p50_ms"],
            "publish p99 ms": publish["p99_ms"]}


def print_medians(results: dict[str, list[dict[str, float]]], figures: tuple[str, ...], new: str, old: str) -> None:
    """Each kind's medians of `figures`, then the ratios `new` / `old` (below 1.0: `new` needs less)."""
    medians = {kind: {f: statistics.median(r[f] for r in runs) for f in figures} for kind, runs in results.items()}
    label = max(len(kind) for kind in [*results, "ratio"]) + 2
    print(f"\n{'':>{label}}" + "".join(f"{figure:>17}" for figure in figures))
    for kind, values in medians.items():
        print(f"{kind:>{label}}" + "".join(f"{values[f]:>17.2f}" for f in figures))
    print(f"{'ratio':>{label}}" + "".join(f"{medians[new][f] / medians[old][f]:>17.2f}" for f in figures))

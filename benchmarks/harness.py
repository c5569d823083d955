"""What the kafkabench-side benchmarks share: the cluster they measure on, a minimal Java loop compiled and started as
kafkabench's Java worker is (its JVM flags, the pinned Kafka jars), a consumer worker run to its result, and the
kafkabench-against-minimal comparison in ABBA order."""

from __future__ import annotations

import contextlib
import os
import statistics
import subprocess
import time
from pathlib import Path
from typing import Callable

from kafkabench.cluster import EmbeddedCluster
from kafkabench.cluster.artifacts import JarCache
from kafkabench.cluster.java import find_java
from kafkabench.cluster.target import Target
from kafkabench.core.protocol import Finish, Progress, Ready, Result, Start, Task
from kafkabench.workers.java_build import JVM_FLAGS

HERE = Path(__file__).parent


def open_target(stack: contextlib.ExitStack, bootstrap_servers: str | None, work: Path) -> Target:
    """The cluster given, or a one-broker embedded one in `work`, stopped with `stack`."""
    if bootstrap_servers:
        return Target.external(bootstrap_servers)
    return Target.embedded(stack.enter_context(EmbeddedCluster(brokers=1, directory=work / "cluster")))


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

"""What the kafkabench-side benchmarks share: the cluster they measure on, and a minimal Java loop compiled and
started as kafkabench's Java worker is (its JVM flags, the pinned Kafka jars)."""

from __future__ import annotations

import contextlib
import os
import subprocess
from pathlib import Path

from kafkabench.cluster import EmbeddedCluster
from kafkabench.cluster.artifacts import JarCache
from kafkabench.cluster.java import find_java
from kafkabench.cluster.target import Target
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

"""The nodes' own main class (KafkabenchNode.java, beside this module): a node formats its storage and then starts,
in one JVM where Kafka's scripts take two (the formatter's JVM costs each node most of a second of CPU before it
starts, and its classes are mostly the node's own).

It is compiled once per Kafka version with the JDK's javac into a jar beside that version's jars. Without a javac,
or where a version's jars lack what it calls, the nodes are formatted first by Kafka's StorageTool in JVMs of their
own, as Kafka's scripts do."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
import zipfile
from importlib import resources
from pathlib import Path

from kafkabench.cluster.java import MIN_JAVA, Java

SOURCE = "KafkabenchNode.java"
MAIN_CLASS = "kafkabench.cluster.KafkabenchNode"
COMPILE_TIMEOUT_S = 120  # about 2 s of CPU, once per Kafka version


def node_jar(java: Java, classpath: str, directory: Path) -> Path | None:
    """The jar of the nodes' main class for the jars of `classpath` (kept in `directory`, their version's), compiled
    now if it never was; None when it cannot be, and the nodes are formatted apart."""
    source = resources.files(__package__).joinpath(SOURCE).read_text(encoding="utf-8")
    key = hashlib.sha256(f"{source}\0{classpath}".encode()).hexdigest()[:12]
    jar = directory / f"kafkabench-node-{key}.jar"
    refused = jar.with_suffix(".javac.log")  # this version's jars did not compile it: not tried again
    if jar.is_file():
        return jar
    if java.javac is None or refused.is_file():
        return None
    work = Path(tempfile.mkdtemp(prefix=".kafkabench-node-", dir=directory))
    try:
        (work / SOURCE).write_text(source, encoding="utf-8")
        classes = work / "classes"
        compiled = subprocess.run([str(java.javac), "--release", str(MIN_JAVA), "-nowarn", "-cp", classpath,
                                   "-d", str(classes), str(work / SOURCE)],
                                  capture_output=True, text=True, timeout=COMPILE_TIMEOUT_S)
        if compiled.returncode != 0:
            refused.write_text(compiled.stdout + compiled.stderr)
            return None
        partial = work / "node.jar"  # a jar, not a directory: class-data sharing maps classes from jars only
        with zipfile.ZipFile(partial, "w") as archive:
            for path in sorted(classes.rglob("*.class")):
                archive.write(path, path.relative_to(classes).as_posix())
        os.replace(partial, jar)  # whole or not at all, even beside another process doing the same
        return jar
    except (OSError, subprocess.TimeoutExpired):
        return None
    finally:
        shutil.rmtree(work, ignore_errors=True)

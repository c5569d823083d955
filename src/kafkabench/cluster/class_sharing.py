"""Class-data sharing for the nodes' JVMs: the classes a broker loads while it starts, parsed and verified once and
kept in an archive that every later JVM maps instead of reading them from the jars (JDK 17's AppCDS). It cuts a
node's start-up CPU by about a quarter (3 brokers: 11.7 s against 16.2 s) and changes nothing once a broker runs.

The archive is made once per Kafka version and Java runtime and kept beside that version's jars: a cluster that
finds none has its first node record the classes it loads, and once the cluster is ready a process of its own turns
that list into the archive (about 10 s of one core) while the cluster runs on; the next cluster maps it. A JVM that
cannot use an archive (another runtime, jars moved) runs without it, as the JVM's own -Xshare:auto does."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from kafkabench.cluster.java import Java

BUILD_TIMEOUT_S = 180  # the dump takes about 10 s of one core; a loaded machine's several times that
STALE_BUILD_S = 2 * BUILD_TIMEOUT_S  # a builder that left its mark this long ago died without removing it
RECORDED_SETTLE_S = 10.0  # a JVM loads its classes in its first seconds: a list not added to for this long is done


@dataclass(frozen=True)
class ClassSharing:
    """The archive of one Java runtime and classpath (a Kafka version's jars in `directory`), named for what loads
    it: the brokers' classes, or the Java worker's (workers/java_build.py)."""

    java: Java
    classpath: str
    directory: Path
    name: str = "broker-classes"

    @property
    def archive(self) -> Path:
        # an archive holds the classes of one runtime and classpath: a JVM refuses it for any other
        runtime = hashlib.sha256(f"{Path(self.java.executable).resolve()}|{self.java.version}|{self.classpath}".encode()).hexdigest()[:12]
        return self.directory / f"{self.name}-{runtime}.jsa"

    @property
    def _building(self) -> Path:
        return _building_mark(self.archive)

    def options(self, record_to: Path | None = None) -> list[str]:
        """A JVM's options: map the archive when there is one; without, record the classes it loads to `record_to`
        (one node per cluster is enough), or nothing."""
        if self.archive.is_file():
            return [f"-XX:SharedArchiveFile={self.archive}"]
        return [f"-XX:DumpLoadedClassList={record_to}"] if record_to is not None else []

    def options_among_many(self) -> list[str]:
        """A JVM's options where many start on their own (the Java workers): map the archive; without one, have it
        made from the list an earlier JVM recorded once that list has not grown for RECORDED_SETTLE_S, or record the
        classes this one loads when no other JVM does (a JVM runs without while the archive is being made)."""
        recorded = self.archive.with_suffix(".recorded.lst")  # the builder snapshots it beside, as .lst
        if self.archive.is_file():
            recorded.unlink(missing_ok=True)  # a JVM's that recorded while the archive was being made
            return self.options()
        if recorded.is_file():
            listed = recorded.stat()
            settled = time.time() - listed.st_mtime > RECORDED_SETTLE_S
            if settled and (not listed.st_size or self.build_from([recorded])):
                recorded.unlink()  # copied for the builder, or its JVM never ran: a later JVM records again
            return []
        return self.options(record_to=recorded) if _create_alone(recorded) else []

    def build_from(self, class_lists: list[Path]) -> bool:
        """Start making the archive from the classes `class_lists` name (each node's that recorded) in a process that
        outlives this one (a `cluster up` returns at once); False when there is an archive, nothing was recorded, or
        another process is making it."""
        recorded = [class_list for class_list in class_lists if class_list.is_file()]
        if self.archive.is_file() or not recorded or not self._claim():
            return False
        snapshot = self._building.with_suffix(".lst")
        _join_whole_lines(recorded, snapshot)  # the nodes keep appending as they load more classes
        command = [sys.executable, "-m", __name__, str(self.java.executable), self.classpath, str(snapshot), str(self.archive)]
        subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                         start_new_session=True)
        return True

    def _claim(self) -> bool:
        """The right to build, as a file only one process can create; a mark a dead builder left long ago is taken over."""
        try:
            if time.time() - self._building.stat().st_mtime > STALE_BUILD_S:
                self._building.unlink(missing_ok=True)
        except FileNotFoundError:
            pass
        return _create_alone(self._building)


def _create_alone(path: Path) -> bool:
    """Whether this process created `path`: only one process can."""
    try:
        os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644))
        return True
    except FileExistsError:
        return False


def _building_mark(archive: Path) -> Path:
    """The file only the process making `archive` holds."""
    return archive.with_suffix(".building")


def _join_whole_lines(sources: list[Path], target: Path) -> None:
    """Every whole line of `sources`, each once, in the order they first come."""
    lines: dict[bytes, None] = {}
    for source in sources:
        data = source.read_bytes()
        lines.update(dict.fromkeys(data[:data.rfind(b"\n") + 1].splitlines(keepends=True)))
    target.write_bytes(b"".join(lines))


def build(java: str, classpath: str, class_list: Path, archive: Path) -> None:
    """Dump the archive beside its final name, check that a JVM maps it, then put it in place in one rename, so a JVM
    never maps half an archive; the builder's mark and the list go whatever happens."""
    partial = archive.with_name(f"{archive.name}.{os.getpid()}.part")
    try:
        subprocess.run([java, "-Xshare:dump", f"-XX:SharedClassListFile={class_list}", f"-XX:SharedArchiveFile={partial}",
                        "-cp", classpath], stdin=subprocess.DEVNULL, capture_output=True, timeout=BUILD_TIMEOUT_S, check=True)
        subprocess.run([java, "-Xshare:on", f"-XX:SharedArchiveFile={partial}", "-cp", classpath, "-version"],
                       stdin=subprocess.DEVNULL, capture_output=True, timeout=60, check=True)
        os.replace(partial, archive)
    except (OSError, subprocess.SubprocessError):
        pass  # no archive: the next cluster records and tries again
    finally:
        partial.unlink(missing_ok=True)
        class_list.unlink(missing_ok=True)
        _building_mark(archive).unlink(missing_ok=True)


if __name__ == "__main__":
    build(sys.argv[1], sys.argv[2], Path(sys.argv[3]), Path(sys.argv[4]))

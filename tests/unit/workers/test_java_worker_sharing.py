"""The Java worker's class-sharing archive: one worker records what it loads, a later start has the archive made
from that list once the recorder is done with it, and the workers after map it."""

import os
import time
from pathlib import Path

import pytest

from kafkabench.cluster import class_sharing as sharing_module
from kafkabench.cluster.java import Java
from kafkabench.workers import java_build

JAVA = Java(Path("/usr/bin/java"), "17.0.15", 17, "PATH")


@pytest.fixture
def started(monkeypatch) -> list[list[str]]:
    """The archive builders started, recorded instead of run."""
    commands: list[list[str]] = []
    monkeypatch.setattr(sharing_module.subprocess, "Popen", lambda command, **_: commands.append(command))
    return commands


def options(tmp_path: Path) -> list[str]:
    return java_build.class_sharing(JAVA, f"/jars/kafka-clients.jar:{tmp_path / 'key.jar'}", tmp_path / "key.jar")


def test_the_first_worker_records_and_one_started_beside_it_neither_records_nor_builds(tmp_path, started):
    [first] = options(tmp_path)
    recorded = Path(first.removeprefix("-XX:DumpLoadedClassList="))
    assert first.startswith("-XX:DumpLoadedClassList=") and recorded.parent == tmp_path and recorded.is_file()
    recorded.write_text("java/lang/Object\n")
    assert options(tmp_path) == [] and started == []  # the recorder may still be loading classes


def test_a_list_the_recorder_is_done_with_has_the_archive_made_and_the_workers_after_map_it(tmp_path, started):
    [first] = options(tmp_path)
    recorded = Path(first.removeprefix("-XX:DumpLoadedClassList="))
    recorded.write_text("java/lang/Object\nkafkabench/KafkabenchWorker\n")
    settled = time.time() - sharing_module.RECORDED_SETTLE_S - 1
    os.utime(recorded, (settled, settled))
    assert options(tmp_path) == []  # this one runs without, while the archive is made
    [builder] = started
    snapshot, archive = Path(builder[-2]), Path(builder[-1])
    assert snapshot.read_text() == "java/lang/Object\nkafkabench/KafkabenchWorker\n" and not recorded.exists()
    assert archive.parent == tmp_path and archive.name.startswith("java-worker-classes-")
    archive.write_bytes(b"archive")  # the builder's work, done
    assert options(tmp_path) == [f"-XX:SharedArchiveFile={archive}"]
    assert len(started) == 1


def test_a_list_whose_worker_never_ran_is_dropped_and_a_later_worker_records_again(tmp_path, started):
    [first] = options(tmp_path)
    recorded = Path(first.removeprefix("-XX:DumpLoadedClassList="))
    settled = time.time() - sharing_module.RECORDED_SETTLE_S - 1
    os.utime(recorded, (settled, settled))  # empty: the JVM died before it loaded a class
    assert options(tmp_path) == [] and not recorded.exists() and started == []
    assert options(tmp_path) == [first]

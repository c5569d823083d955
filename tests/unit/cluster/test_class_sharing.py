import os
import subprocess
import time
import zipfile
from pathlib import Path

import pytest

from kafkabench.cluster import class_sharing
from kafkabench.cluster.class_sharing import ClassSharing, build
from kafkabench.cluster.java import Java, find_java
from kafkabench.errors import JavaNotFoundError


def sharing(directory: Path, version: str = "17.0.15") -> ClassSharing:
    return ClassSharing(Java(Path("/usr/bin/java"), version, 17, "PATH"), "/jars/a.jar:/jars/b.jar", directory)


def test_without_an_archive_one_node_records_what_it_loads_and_the_others_run_as_before(tmp_path):
    classes = tmp_path / "node-1" / "classes.lst"
    assert sharing(tmp_path).options(record_to=classes) == [f"-XX:DumpLoadedClassList={classes}"]
    assert sharing(tmp_path).options() == []


def test_with_an_archive_every_jvm_maps_it_and_nothing_is_recorded(tmp_path):
    archive = sharing(tmp_path).archive
    archive.write_bytes(b"archive")
    assert sharing(tmp_path).options(record_to=tmp_path / "classes.lst") == [f"-XX:SharedArchiveFile={archive}"]
    assert sharing(tmp_path).options() == [f"-XX:SharedArchiveFile={archive}"]


def test_another_java_runtime_has_an_archive_of_its_own(tmp_path):
    assert sharing(tmp_path, "17.0.15").archive != sharing(tmp_path, "21.0.1").archive
    assert sharing(tmp_path).archive.parent == tmp_path  # beside the Kafka version's jars


@pytest.fixture
def started(monkeypatch) -> list[list[str]]:
    """The builder processes build_from starts, recorded instead of run."""
    commands: list[list[str]] = []
    monkeypatch.setattr(class_sharing.subprocess, "Popen", lambda command, **_: commands.append(command))
    return commands


def test_one_process_builds_while_the_others_go_on_without(tmp_path, started):
    recorded = tmp_path / "classes.lst"
    recorded.write_text("java/lang/Object\njava/lang/Str")  # the node is writing its next line
    assert sharing(tmp_path).build_from([recorded]) is True
    assert sharing(tmp_path).build_from([recorded]) is False
    assert len(started) == 1
    java, classpath, snapshot, archive = started[0][-4:]
    assert (java, classpath, archive) == ("/usr/bin/java", "/jars/a.jar:/jars/b.jar", str(sharing(tmp_path).archive))
    assert Path(snapshot).read_text() == "java/lang/Object\n"  # whole lines only


def test_a_broker_and_a_controller_give_one_list_of_what_either_loaded(tmp_path, started):
    broker, controller = tmp_path / "broker.lst", tmp_path / "controller.lst"
    broker.write_text("# a note\njava/lang/Object\nkafka/server/BrokerServer\n")
    controller.write_text("# a note\njava/lang/Object\nkafka/server/ControllerServer\nkafka/Half")
    assert sharing(tmp_path).build_from([broker, controller, tmp_path / "never-recorded.lst"]) is True
    snapshot = Path(started[0][-2])
    assert snapshot.read_text().splitlines() == ["# a note", "java/lang/Object", "kafka/server/BrokerServer",
                                                 "kafka/server/ControllerServer"]


def test_nothing_is_built_without_a_list_or_with_an_archive(tmp_path, started):
    assert sharing(tmp_path).build_from([tmp_path / "never-recorded.lst"]) is False
    (tmp_path / "classes.lst").write_text("java/lang/Object\n")
    sharing(tmp_path).archive.write_bytes(b"archive")
    assert sharing(tmp_path).build_from([tmp_path / "classes.lst"]) is False
    assert started == []


def test_a_builder_that_died_long_ago_does_not_block_the_next(tmp_path, started):
    (tmp_path / "classes.lst").write_text("java/lang/Object\n")
    mark = sharing(tmp_path).archive.with_suffix(".building")
    mark.touch()
    assert sharing(tmp_path).build_from([tmp_path / "classes.lst"]) is False  # a builder at work
    long_ago = time.time() - class_sharing.STALE_BUILD_S - 1
    os.utime(mark, (long_ago, long_ago))
    assert sharing(tmp_path).build_from([tmp_path / "classes.lst"]) is True
    assert len(started) == 1


@pytest.fixture
def java() -> Java:
    try:
        return find_java()
    except JavaNotFoundError as exc:
        pytest.skip(str(exc))


def jar(path: Path) -> Path:
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("META-INF/MANIFEST.MF", "Manifest-Version: 1.0\n")
    return path


def test_the_archive_is_put_in_place_only_once_a_jvm_maps_it(tmp_path, java):
    classpath, archive = str(jar(tmp_path / "app.jar")), tmp_path / "broker-classes.jsa"
    (tmp_path / "classes.lst").write_text("java/lang/Object\njava/lang/String\n")
    archive.with_suffix(".building").touch()
    build(str(java.executable), classpath, tmp_path / "classes.lst", archive)
    mapped = subprocess.run([str(java.executable), "-Xshare:on", f"-XX:SharedArchiveFile={archive}", "-cp", classpath,
                             "-version"], capture_output=True, timeout=60)
    assert mapped.returncode == 0, mapped.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["app.jar", "broker-classes.jsa"]  # no list, mark or part left


def test_a_failed_build_leaves_nothing_and_the_next_cluster_tries_again(tmp_path, java):
    archive = tmp_path / "broker-classes.jsa"
    (tmp_path / "classes.lst").write_text("not a class list\x00\n")
    archive.with_suffix(".building").touch()
    build(str(java.executable), str(jar(tmp_path / "app.jar")), tmp_path / "classes.lst", archive)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["app.jar"]

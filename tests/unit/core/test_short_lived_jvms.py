"""KAFKABENCH_SHORT_LIVED_JVMS: a test suite's JVMs (the Java workers', the brokers a run starts) tuned for a short
life, and every result made under it saying so."""

from pathlib import Path

from kafkabench.cluster.java import Java
from kafkabench.cluster.target import Target
from kafkabench.core.environment import SHORT_LIVED_JVMS
from kafkabench.labs.document import new_document
from kafkabench.workers import java_build


def command(monkeypatch, tmp_path) -> list[str]:
    monkeypatch.setattr(java_build, "build_worker", lambda java, jars, cache_dir=None: tmp_path)
    return java_build.java_worker_command(Java(Path("/usr/bin/java"), "21.0.1", 21, "PATH"), [tmp_path / "kafka-clients-4.4.0.jar"])


def test_a_measurement_keeps_the_workers_measurement_flags(monkeypatch, tmp_path):
    monkeypatch.delenv(SHORT_LIVED_JVMS, raising=False)
    argv = command(monkeypatch, tmp_path)
    assert "-XX:+AlwaysPreTouch" in argv and "-Xms512m" in argv and "-XX:TieredStopAtLevel=1" not in argv
    assert new_document("produce", Target.external("127.0.0.1:9092", {}), {}).notes == []


def test_a_test_suites_workers_run_c1_only_and_its_results_say_so(monkeypatch, tmp_path):
    monkeypatch.setenv(SHORT_LIVED_JVMS, "1")
    argv = command(monkeypatch, tmp_path)
    assert "-XX:TieredStopAtLevel=1" in argv and "-XX:+AlwaysPreTouch" not in argv and "-Xms512m" not in argv
    (note,) = new_document("produce", Target.external("127.0.0.1:9092", {}), {}).notes
    assert note.startswith(f"warning: {SHORT_LIVED_JVMS}=1:") and "not a measurement's" in note

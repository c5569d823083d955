"""The nodes' main class, compiled and run against stand-ins for Kafka's StorageTool and kafka.Kafka that say what
they were given (the real ones start every embedded cluster of the integration tests)."""

import os
import subprocess
from pathlib import Path

import pytest

from kafkabench.cluster.java import Java, find_java
from kafkabench.cluster.node_launcher import MAIN_CLASS, node_jar
from kafkabench.errors import JavaNotFoundError

STAND_INS = {
    "kafka/tools/StorageTool.java": """package kafka.tools;
        public final class StorageTool {
            public static int execute(String[] args, java.io.PrintStream out) {
                out.println("formatted with " + String.join(" ", args));
                if (args[0].equals("throw")) throw new IllegalStateException("Log directory /d is already formatted");
                return args[0].equals("format") ? 0 : 1;
            }
        }""",
    "kafka/Kafka.java": """package kafka;
        public final class Kafka {
            public static void main(String[] args) { System.out.println("started with " + String.join(" ", args)); }
        }""",
}


@pytest.fixture(scope="module")
def jdk() -> Java:
    try:
        java = find_java()
    except JavaNotFoundError as exc:
        pytest.skip(str(exc))
    if java.javac is None:
        pytest.skip(f"no javac beside {java.executable}")
    return java


@pytest.fixture(scope="module")
def kafka_jars(jdk, tmp_path_factory) -> str:
    """A classpath of stand-ins for the two Kafka classes the main class calls."""
    root = tmp_path_factory.mktemp("stand-ins")
    for name, text in STAND_INS.items():
        (root / "src" / name).parent.mkdir(parents=True, exist_ok=True)
        (root / "src" / name).write_text(text)
    subprocess.run([str(jdk.javac), "-d", str(root / "classes"), *(str(root / "src" / name) for name in STAND_INS)],
                   check=True, timeout=120)
    subprocess.run([str(jdk.executable.with_name("jar")), "cf", str(root / "kafka.jar"), "-C", str(root / "classes"), "."],
                   check=True, timeout=60)
    return str(root / "kafka.jar")


@pytest.fixture(scope="module")
def launcher(jdk, kafka_jars, tmp_path_factory) -> Path:
    directory = tmp_path_factory.mktemp("kafka-version")
    jar = node_jar(jdk, kafka_jars, directory)
    assert jar is not None and jar.parent == directory
    assert node_jar(jdk, kafka_jars, directory) == jar and len(list(directory.iterdir())) == 1  # compiled once
    return jar


def run(java: Java, classpath: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(java.executable), "-cp", classpath, MAIN_CLASS, *args], capture_output=True, text=True,
                          timeout=60)


def test_the_node_formats_its_storage_then_starts_in_the_same_jvm(jdk, kafka_jars, launcher):
    done = run(jdk, os.pathsep.join([kafka_jars, str(launcher)]), "format", "--ignore-formatted", "--", "server.properties")
    assert (done.returncode, done.stdout.splitlines()) == (0, ["formatted with format --ignore-formatted",
                                                               "started with server.properties"])


@pytest.mark.parametrize("first, said", [
    ("refused", "formatted with refused"),  # the tool's own exit code and words
    ("throw", "Error: formatting the storage failed: Log directory /d is already formatted"),
])
def test_a_storage_not_formatted_ends_the_node_before_it_starts_with_the_reason_last(jdk, kafka_jars, launcher, first, said):
    done = run(jdk, os.pathsep.join([kafka_jars, str(launcher)]), first, "--", "server.properties")
    assert (done.returncode, done.stdout.splitlines()[-1]) == (1, said)
    assert "started with" not in done.stdout


def test_jars_it_does_not_compile_against_leave_the_formatting_to_a_jvm_of_its_own_and_are_not_tried_again(jdk, tmp_path):
    assert node_jar(jdk, str(tmp_path / "no-kafka.jar"), tmp_path) is None
    [log] = tmp_path.glob("kafkabench-node-*.javac.log")
    assert "kafka.tools" in log.read_text()  # javac's own words on what is missing
    log.write_text("refused before")
    assert node_jar(jdk, str(tmp_path / "no-kafka.jar"), tmp_path) is None and log.read_text() == "refused before"
    assert sorted(p.suffix for p in tmp_path.iterdir()) == [".log"]  # no jar, no half-built work left


def test_a_runtime_without_a_compiler_formats_apart(tmp_path):
    runtime_only = Java(tmp_path / "jre" / "bin" / "java", "17.0.15", 17, "PATH")
    assert node_jar(runtime_only, "/jars/kafka.jar", tmp_path) is None
    assert list(tmp_path.iterdir()) == []

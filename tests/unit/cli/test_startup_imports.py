"""The command line starts without the Kafka clients and the report's libraries: they load when a command runs
against a cluster or writes a report, so `--help`, a refused option or `compare` answer at once (each of them
costs a tenth of a second or more to import, and the suite calls the CLI a hundred times). A command that needs no
lab (`cluster`, `ray`, `check`, `clients`) is built alone, without every lab's options, and a lab's command without
the other labs'."""

from __future__ import annotations

import subprocess
import sys

LOADED_ON_USE = ("confluent_kafka", "kafka", "aiokafka", "plotly", "jinja2", "psutil")


def loaded_by(code: str) -> set[str]:
    listed = subprocess.run([sys.executable, "-c", f"import sys; {code}; print(*sorted(sys.modules))"],
                            capture_output=True, text=True, timeout=60, check=True)
    return set(listed.stdout.split())


def test_the_command_line_imports_no_client_and_no_report_library():
    loaded = loaded_by("from kafkabench.cli.app import app")
    assert "kafkabench.labs.latency" in loaded  # every lab's command is built, from its scenario
    assert sorted(loaded & set(LOADED_ON_USE)) == []


def test_a_command_that_needs_no_lab_is_built_alone():
    loaded = loaded_by("from kafkabench.cli.app import build; build('cluster')")
    assert "kafkabench.cli.cluster" in loaded
    assert sorted(m for m in loaded if m.startswith(("kafkabench.labs", "kafkabench.cli.run", "kafkabench.report"))) == []


def test_importing_the_module_builds_nothing():
    assert "kafkabench.cli.cluster" not in loaded_by("import kafkabench.cli.app")


def test_a_lab_command_is_built_without_the_other_labs():
    loaded = loaded_by("from kafkabench.cli.app import build; build('latency')")
    labs = {m.split(".")[2] for m in loaded if m.startswith("kafkabench.labs.") and m.count(".") >= 2}
    others = {"throughput", "compression", "durability", "delivery", "monitor", "capacity", "tune", "groups", "omb"}
    assert "latency" in labs and not labs & others, sorted(labs)
    assert "kafkabench.cli.run" not in loaded

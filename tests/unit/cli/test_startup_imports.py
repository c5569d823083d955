"""The command line starts without the Kafka clients and the report's libraries: they load when a command runs
against a cluster or writes a report, so `--help`, a refused option or `compare` answer at once (each of them
costs a tenth of a second or more to import, and the suite calls the CLI a hundred times)."""

from __future__ import annotations

import subprocess
import sys

LOADED_ON_USE = ("confluent_kafka", "kafka", "aiokafka", "plotly", "jinja2", "psutil")


def test_the_command_line_imports_no_client_and_no_report_library():
    listed = subprocess.run([sys.executable, "-c", "import sys, kafkabench.cli.app; print(*sorted(sys.modules))"],
                            capture_output=True, text=True, timeout=60, check=True)
    loaded = set(listed.stdout.split())
    assert "kafkabench.labs.latency" in loaded  # every lab's command is built, from its scenario
    assert sorted(loaded & set(LOADED_ON_USE)) == []

"""A lab registered only here (tests/integration/toy_lab.py, nothing else edited) runs through `kafkabench run`
with a plan and appears in the report and the CSV."""

import csv
import json

import pytest
from typer.testing import CliRunner

from kafkabench.cli.app import app
from kafkabench.labs import registry

from .toy_lab import ToyLab

pytestmark = [pytest.mark.integration, pytest.mark.quick]  # seconds on the session cluster: in `make test-quick`


@pytest.fixture
def toy_lab():
    lab = registry.register(ToyLab())
    yield lab
    registry.unregister(lab.name)


def test_a_lab_registered_at_run_time_runs_in_a_plan_and_reaches_the_report(toy_lab, kafka_cluster, tmp_path):
    plan = tmp_path / "plan.yaml"
    plan.write_text("name: toys\nrepeats: 2\nscenarios:\n  - lab: toy\n    count: 15\n  - lab: toy\n    name: more\n    count: 5\n")
    result = CliRunner().invoke(app, ["run", str(plan), "--out", str(tmp_path / "run"), "-b", kafka_cluster.bootstrap_servers])
    assert result.exit_code == 0, result.output

    run = json.loads((tmp_path / "run" / "run.json").read_text())
    assert [(c["name"], c["status"]) for c in run["cells"]] == [("toy-default", "ok"), ("more-default", "ok")] * 2
    html = (tmp_path / "run" / "report.html").read_text()
    assert "toy: latencies in ms" in html and "metadata p50" in html  # the generic table, the toy's headline
    with (tmp_path / "run" / "report.csv").open() as f:
        rows = list(csv.DictReader(f))
    assert sorted((r["lab"], r["plan_cell"], r["plan_repeat"], r["counters.requests"]) for r in rows) == [
        ("toy", "more-default", "1", "5"), ("toy", "more-default", "2", "5"),
        ("toy", "toy-default", "1", "15"), ("toy", "toy-default", "2", "15")]
    assert all(float(r["stats.metadata.p50_ms"]) > 0 and r["stats.metadata.count"] in ("15", "5") for r in rows)

import pytest
from typer.testing import CliRunner

from kafkabench import __version__
from kafkabench.cli.app import app

runner = CliRunner()

COMMANDS = [[], ["check"], ["latency"], ["clients"], ["produce"], ["consume"], ["compression"], ["run"], ["report"], ["compare"], ["cluster"], *[["cluster", c] for c in ("up", "status", "down", "logs", "kill", "pause", "resume", "restart")]]


def test_version():
    result = runner.invoke(app, ["--version"])
    assert result.exit_code == 0
    assert result.stdout.strip() == f"kafkabench {__version__}"


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: " ".join(c) or "kafkabench")
def test_every_command_has_help(command):
    result = runner.invoke(app, [*command, "--help"])
    assert result.exit_code == 0, result.output
    assert "Usage:" in result.stdout


def test_bad_broker_config_is_refused_before_anything_starts(tmp_path):
    result = runner.invoke(app, ["cluster", "up", "--dir", str(tmp_path), "--broker-config", "num.io.threads"])
    assert result.exit_code != 0
    assert not any(tmp_path.iterdir())


def test_a_lab_command_shows_its_options_in_panels():
    from kafkabench.labs import registry

    for lab in registry.labs():
        named = [name for names in lab.scenario.panels.values() for name in names]
        assert set(named) <= set(lab.scenario.model_fields), lab.name  # a panel names only the scenario's fields
        assert len(named) == len(set(named)), lab.name  # and each field once
    result = runner.invoke(app, ["delivery", "--help"], env={"COLUMNS": "120"})
    panels = [line.split("─ ")[1].split(" ─")[0] for line in result.stdout.splitlines() if line.startswith("╭─ ")]
    assert panels == ["Options", "Workload", "Producer modes", "Faults", "Transactions", "Consumers and copier",
                      "Client and topic settings", "Cluster, workers and output"]
    options = result.stdout.split("╭─ Workload")[0]
    assert options.count("--") == 1 and "--help" in options  # every option of the lab in a panel of its own kind


def test_max_rate_offers_its_steps_warm_up_and_its_holds():
    result = runner.invoke(app, ["max-rate", "--help"], env={"COLUMNS": "200"})
    assert result.exit_code == 0
    flat = " ".join(result.stdout.split())
    assert "--settle <float> Each step's warm-up" in flat and "--holds" in flat

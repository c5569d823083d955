import typer
from typer.testing import CliRunner

from kafkabench.cli.report import report
from kafkabench.report.collect import ReportError

from .results_factory import latency_result

runner = CliRunner()


def app() -> typer.Typer:
    # the command as app.py registers it, without depending on that registration here
    application = typer.Typer()
    application.command(name="report")(report)
    application.command(name="other")(lambda: None)  # two commands: `report` stays a subcommand
    return application


def test_by_default_both_files_land_in_the_first_directory(tmp_path):
    latency_result(tmp_path / "run" / "a", {"tcp": 1.0})
    result = runner.invoke(app(), ["report", str(tmp_path / "run")])
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines() == [f"report: {tmp_path / 'run' / 'report.html'}", f"csv: {tmp_path / 'run' / 'report.csv'}"]
    assert (tmp_path / "run" / "report.html").is_file() and (tmp_path / "run" / "report.csv").is_file()


def test_only_the_files_asked_for(tmp_path):
    latency_result(tmp_path / "a", {"tcp": 1.0})
    latency_result(tmp_path / "b", {"tcp": 2.0})
    result = runner.invoke(app(), ["report", str(tmp_path / "a"), str(tmp_path / "b"), "--csv", str(tmp_path / "all.csv")])
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines() == [f"csv: {tmp_path / 'all.csv'}"]
    assert len((tmp_path / "all.csv").read_text().splitlines()) == 3  # header + one run per result
    assert not (tmp_path / "a" / "report.html").exists()


def test_errors(tmp_path):
    missing = runner.invoke(app(), ["report", str(tmp_path / "missing")])
    assert missing.exit_code == 1 and "no such directory" in missing.output
    # kafkabench's main() turns a KafkabenchError into one line and exit 1
    empty = runner.invoke(app(), ["report", str(tmp_path)])
    assert isinstance(empty.exception, ReportError) and "no result.json found under" in str(empty.exception)

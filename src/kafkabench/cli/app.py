"""The `kafkabench` command."""

from __future__ import annotations

import os
import sys
import traceback
from typing import Optional

import typer

from kafkabench import __version__
from kafkabench.cli import check, clients, cluster, compare, ray, report, run
from kafkabench.cli.lab_command import lab_command
from kafkabench.cli.output import abort, out
from kafkabench.config.redact import scrub_text
from kafkabench.errors import KafkabenchError
from kafkabench.labs import registry

app = typer.Typer(
    name="kafkabench",
    help="A Kafka performance and trade-off lab: what a setting, client, codec or durability level costs, measured on a real cluster.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)
app.add_typer(cluster.app, name="cluster")
app.add_typer(ray.app, name="ray")
app.command(name="check")(check.check)
app.command(name="clients")(clients.clients)
for _lab in registry.labs():  # every lab is a command of its name, its options from its scenario model
    app.command(name=_lab.name)(lab_command(_lab))
app.command(name="run")(run.run)
app.command(name="report")(report.report)
app.command(name="compare")(compare.compare)


def _version(value: bool) -> None:
    if value:
        out.print(f"kafkabench {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Optional[bool] = typer.Option(None, "--version", callback=_version, is_eager=True, help="Print the version and exit."),
    debug: bool = typer.Option(False, "--debug", help="Show a traceback when something fails."),
) -> None:
    if debug:
        os.environ["KAFKABENCH_DEBUG"] = "1"


def main() -> None:
    try:
        app()
    except KafkabenchError as exc:
        if os.environ.get("KAFKABENCH_DEBUG"):  # the traceback, as scrubbed as everything else printed
            sys.stderr.write(scrub_text(traceback.format_exc()))
            raise SystemExit(1) from None
        try:
            abort(scrub_text(str(exc)))
        except typer.Exit as exit_:
            raise SystemExit(exit_.exit_code) from None
    except KeyboardInterrupt:
        raise SystemExit(130) from None

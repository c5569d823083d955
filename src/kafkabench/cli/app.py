"""The `kafkabench` command."""

from __future__ import annotations

import importlib
import os
import sys
import traceback
from typing import Callable, Optional

import typer

from kafkabench import __version__
from kafkabench.cli.output import abort, out
from kafkabench.config.redact import scrub_text
from kafkabench.errors import KafkabenchError


def _group(name: str) -> Callable[[typer.Typer], None]:
    return lambda app: app.add_typer(importlib.import_module(f"kafkabench.cli.{name}").app, name=name)


def _command(name: str) -> Callable[[typer.Typer], None]:
    return lambda app: app.command(name=name)(getattr(importlib.import_module(f"kafkabench.cli.{name}"), name))


def _lab(name: str) -> Callable[[typer.Typer], None]:
    def add(app: typer.Typer) -> None:
        from kafkabench.cli.lab_command import lab_command
        from kafkabench.labs import registry

        app.command(name=name)(lab_command(registry.get(name)))  # its options from its scenario model
    return add


# the commands that need no lab, then the labs', then those that run and read plans and results, in the order the
# help lists them. A call builds the command it calls alone: `cluster status` starts on 0.41 of the CPU it took with
# every lab's options built, `latency --help` on 0.85 (benchmarks/cli_startup.py)
ALONE = {"cluster": _group("cluster"), "ray": _group("ray"), "check": _command("check"), "clients": _command("clients")}
AFTER_THE_LABS = {name: _command(name) for name in ("run", "report", "compare")}


def build(only: str | None = None) -> typer.Typer:
    """The `kafkabench` command tree: all of it, or only the command `only` when there is one of that name."""
    app = typer.Typer(
        name="kafkabench",
        help="A Kafka performance and trade-off lab: what a setting, client, codec or durability level costs, measured on a real cluster.",
        no_args_is_help=True,
        pretty_exceptions_enable=False,
        add_completion=False,
    )
    app.callback()(_root)
    commands = {**ALONE, **AFTER_THE_LABS}
    if only not in commands:  # the labs' names, none of them imported
        from kafkabench.labs import registry

        commands = {**ALONE, **{name: _lab(name) for name in registry.names()}, **AFTER_THE_LABS}
    for name, add in commands.items():
        if only == name or only not in commands:
            add(app)
    return app


def __getattr__(name: str) -> typer.Typer:
    """`app`, the whole tree, built when first asked for (tests, docs): `main` builds only what a call needs."""
    if name != "app":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()["app"] = built = build()
    return built


def _version(value: bool) -> None:
    if value:
        out.print(f"kafkabench {__version__}")
        raise typer.Exit()


def _root(
    version: Optional[bool] = typer.Option(None, "--version", callback=_version, is_eager=True, help="Print the version and exit."),
    debug: bool = typer.Option(False, "--debug", help="Show a traceback when something fails."),
) -> None:
    if debug:
        os.environ["KAFKABENCH_DEBUG"] = "1"


def main() -> None:
    asked = next((argument for argument in sys.argv[1:] if not argument.startswith("-")), None)
    try:
        build(asked)()
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

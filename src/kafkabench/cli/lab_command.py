"""Every lab's command, generated from its scenario model: one option per field, with the field's default,
help and constraints, so the CLI and a plan cannot drift apart. Parsing is typer's; validation is the model's,
and its errors name the option (`--count: must be > 0`)."""

from __future__ import annotations

import copy
import dataclasses
import inspect
import types
import typing
from pathlib import Path
from typing import Any, Callable, Optional

import typer
from pydantic import BaseModel, ValidationError

from kafkabench.cli import common
from kafkabench.cli.live import Live
from kafkabench.cli.output import err, note, out
from kafkabench.config.client_settings import bootstrap_from
from kafkabench.config.properties import parse_overrides, read_properties_file
from kafkabench.core.launcher import Launcher
from kafkabench.errors import ConfigError
from kafkabench.labs.base import Lab, LabFailed
from kafkabench.labs.scenario import SETTINGS_FIELDS, Cli, Scenario, field_metadata
from kafkabench.plans.loading import explain
from kafkabench.report.terminal import render

GENERIC = ("bootstrap_servers", "out_dir", "as_json", "wide")  # every lab command's own, not its scenario's
LAUNCHER = ("launcher", "ray_address", "spread", "cross_host_e2e")  # and where its workers run, for a lab that starts workers
SETTINGS_PANEL = "Client and topic settings"
WHERE_PANEL = "Cluster, workers and output"


def lab_command(lab: Lab) -> Callable[..., None]:
    """A typer command for `lab`: its scenario's options, then --bootstrap-servers, --out and --json."""
    model = lab.scenario
    fields = [name for name in model.model_fields if name != "lab" and _cli(model, name).offered]
    parameters = [inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=_option(model, name),
                                    annotation=_cli_type(model, name)) for name in fields]
    shared = [("bootstrap_servers", common.BootstrapOption, Optional[str]), ("out_dir", common.OutOption, Optional[Path]),
              ("as_json", common.JsonOption, bool), ("wide", common.WideOption, bool)]
    if lab.starts_workers:
        shared += [("launcher", common.LauncherOption, str), ("ray_address", common.RayAddressOption, Optional[str]),
                   ("spread", common.SpreadOption, str), ("cross_host_e2e", common.CrossHostE2eOption, bool)]
    parameters += [inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=_in_panel(option, WHERE_PANEL),
                                     annotation=annotation) for name, option, annotation in shared]

    def command(**values: Any) -> None:
        scenario = scenario_from_options(model, {name: values[name] for name in fields})
        launcher = Launcher(*(values[name] for name in LAUNCHER)) if lab.starts_workers else Launcher()
        run_lab(lab, scenario, values["bootstrap_servers"], values["out_dir"], values["as_json"], values["wide"], launcher)

    command.__signature__ = inspect.Signature(parameters)  # type: ignore[attr-defined]
    command.__doc__ = lab.summary
    command.__name__ = lab.name
    return command


def scenario_from_options(model: type[Scenario], values: dict[str, Any]) -> Scenario:
    """The scenario the options describe; an option left out keeps the model's default."""
    given = {}
    for name, value in values.items():
        converted = _from_cli(model, name, value)
        if converted is not None:
            given[name] = converted
    try:
        return model.model_validate(given)
    except ValidationError as exc:
        error = exc.errors()[0]
        flag = _flags(model, error["loc"][0])[0] if error["loc"] and error["loc"][0] in model.model_fields else None
        raise ConfigError(f"{flag}: {explain(error)}" if flag else explain(error)) from None


def run_lab(lab: Lab, scenario: Scenario, bootstrap_servers: str | None, out_dir: Path | None, as_json: bool,
            wide: bool = False, launcher: Launcher = Launcher()) -> None:
    from kafkabench.cluster.target import open_target  # the clients load when a lab runs, not for --help
    from kafkabench.connection_check import check_connection

    lab.check(scenario)  # every setting checked before a cluster is touched
    offline = lab.without_cluster(scenario)
    if offline is not None:
        for line in offline:
            note(line)
        return
    directory = common.out_dir(lab.name, out_dir)
    bootstrap = bootstrap_servers or bootstrap_from(getattr(scenario, "producer", None), getattr(scenario, "consumer", None))
    with open_target(bootstrap, scenario.security_settings(), on_start=note, brokers=lab.brokers_for(scenario),
                     controllers=lab.controllers, network=lab.network(scenario)) as target, launcher.open() as workers, Live(wide=wide) as live:
        try:
            served, connected = scenario.against(dataclasses.replace(target, launcher=workers))
            check_connection(served.connection)  # a connection that cannot work: one line now, not a hung lab
            document = lab.run(connected, served, directory, live)
        except LabFailed as failed:
            live.stop()
            for table in lab.tables(failed.document):
                err.print(render(table, wide))
            for line in lab.lines(failed.document):
                err.print(line, style="red", markup=False, highlight=False)
            raise
    console = err if as_json or getattr(scenario, "json_lines", False) else out  # stdout: only the JSON asked for
    for table in lab.tables(document):
        console.print(render(table, wide))
    for line in lab.lines(document):
        console.print(line, markup=False, highlight=False)
    for line in document.notes:
        if line not in live.noted:
            note(line)
    if as_json:
        out.print_json(document.to_json())
    note(f"result: {directory / 'result.json'}")


# ---- from a model field to a typer option and back ---------------------------------------------------

def _cli(model: type[BaseModel], name: str) -> Cli:
    return field_metadata(model, name, Cli) or Cli()


def _flags(model: type[BaseModel], name: str) -> tuple[str, ...]:
    if _cli(model, name).positional:
        return (name.upper(),)
    return _cli(model, name).flags or (f"--{name.replace('_', '-')}",)


def _bare(annotation: Any) -> Any:
    """int from Optional[PositiveInt] (or PositiveInt | None)."""
    if typing.get_origin(annotation) is typing.Annotated:
        return _bare(typing.get_args(annotation)[0])
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        return _bare(args[0]) if len(args) == 1 else str
    return annotation


def _is_list(model: type[BaseModel], name: str) -> bool:
    return typing.get_origin(_bare(model.model_fields[name].annotation)) is list


def _cli_type(model: type[BaseModel], name: str) -> Any:
    bare = _bare(model.model_fields[name].annotation)
    if name in SETTINGS_FIELDS or name == "overrides" or _cli(model, name).repeat:
        if name in ("producer", "consumer"):
            return Optional[Path]
        return list[Path] if typing.get_args(bare) == (Path,) else list[str]
    if bare is bool:
        return bool
    if bare in (int, float, Path):
        return Optional[bare]
    return Optional[str]  # text, a choice, or a comma list


def _panel(model: type[Scenario], name: str) -> str | None:
    """The help panel a field's option is shown in; None: the first, "Options"."""
    if name in SETTINGS_FIELDS or name == "overrides":
        return SETTINGS_PANEL
    return next((panel for panel, names in model.panels.items() if name in names), None)


def _in_panel(option: Any, panel: str) -> Any:
    """A shared option (common.py's) shown in `panel` of this command's help, the shared one left as it is."""
    placed = copy.copy(option)
    placed.rich_help_panel = panel
    return placed


def _option(model: type[Scenario], name: str) -> Any:
    info, cli = model.model_fields[name], _cli(model, name)
    help_text, panel = info.description or "", _panel(model, name)
    if cli.positional:
        return typer.Argument(info.default, help=help_text, show_default=True, metavar=name.upper())
    if _cli_type(model, name) is bool:
        return typer.Option(info.default, *_flags(model, name), help=help_text, rich_help_panel=panel)
    if cli.required:
        return typer.Option(..., *_flags(model, name), help=help_text, rich_help_panel=panel)
    default = info.get_default(call_default_factory=True)
    if default not in (None, [], {}) and "default:" not in help_text:
        shown = ",".join(map(str, default)) if isinstance(default, list) else default
        help_text = f"{help_text} (default: {shown})".strip()
    repeated = typing.get_origin(_cli_type(model, name)) is list
    return typer.Option([] if repeated else None, *_flags(model, name), help=help_text, show_default=False,
                        rich_help_panel=panel)


def _from_cli(model: type[BaseModel], name: str, value: Any) -> Any:
    if value is None or value == []:
        return None
    flag = _flags(model, name)[0]
    if name in ("producer", "consumer"):
        return read_properties_file(value)
    if name in SETTINGS_FIELDS or name == "overrides":
        return parse_overrides(value, flag)
    if isinstance(value, str) and _is_list(model, name) and not _cli(model, name).repeat:
        return [item.strip() for item in value.split(",") if item.strip()]
    return value

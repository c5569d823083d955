"""`kafkabench clients`: versions and latency-deciding defaults of every installed client, side by side."""

from __future__ import annotations

import json

import typer
from rich.table import Table

from kafkabench.cli.output import note, out
from kafkabench.client_defaults import LATENCY_SETTINGS, NOT_A_SETTING, installed_client_defaults


def clients(as_json: bool = typer.Option(False, "--json", help="Print the values as JSON.")) -> None:
    """Each installed client's version and its defaults for the settings that decide latency, read from the libraries."""
    found = installed_client_defaults()
    if as_json:
        out.print_json(json.dumps([d.__dict__ for d in found]))
        return
    table = Table(title="client defaults that decide latency (Java setting names; n/a: the client has no such setting)",
                  title_justify="left")
    table.add_column("role")
    table.add_column("setting")
    for defaults in found:
        table.add_column(f"{defaults.client}\n{defaults.version}", justify="right")
    for role, names in LATENCY_SETTINGS.items():
        for index, name in enumerate(names):
            cells = [defaults.values[role][name] for defaults in found]
            differs = len({c for c in cells if c != NOT_A_SETTING}) > 1
            table.add_row(role if index == 0 else "", f"[bold]{name}[/]" if differs else name,
                          *[f"[dim]{c}[/]" if c == NOT_A_SETTING else c for c in cells])
        table.add_section()
    out.print(table)
    for defaults in found:
        note(f"{defaults.client}: read from {defaults.source}")
    note("bold: the clients disagree")

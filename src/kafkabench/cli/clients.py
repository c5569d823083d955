"""`kafkabench clients`: versions and latency-deciding defaults of every installed client, side by side."""

from __future__ import annotations

import json

import typer
from rich import box
from rich.table import Table

from kafkabench.cli.output import note, out
from kafkabench.client_defaults import LATENCY_SETTINGS, NOT_A_SETTING, ClientDefaults, installed_client_defaults


def clients(as_json: bool = typer.Option(False, "--json", help="Print the values as JSON.")) -> None:
    """Each installed client's version and its defaults for the settings that decide latency, read from the libraries."""
    found = installed_client_defaults()
    if as_json:
        out.print_json(json.dumps([d.__dict__ for d in found]))
        return
    for role, names in LATENCY_SETTINGS.items():
        out.print(defaults_table(role, names, found))
    for defaults in found:
        note(f"{defaults.client} {defaults.version}: read from {defaults.source}")
    note("Java setting names; n/a: the client has no such setting; bold: the clients disagree")


def defaults_table(role: str, names: list[str], found: list[ClientDefaults]) -> Table:
    """One role's settings down, the clients across (each headed by its version, without what the notes add)."""
    table = Table(title=f"{role} defaults that decide latency", title_justify="left", box=box.SIMPLE_HEAD,
                  show_edge=False, collapse_padding=True)
    table.add_column("setting")
    for defaults in found:
        table.add_column(f"{defaults.client}\n{defaults.version.split(' (')[0]}", justify="right")
    for name in names:
        cells = [defaults.values[role][name] for defaults in found]
        differs = len({c for c in cells if c != NOT_A_SETTING}) > 1
        table.add_row(f"[bold]{name}[/]" if differs else name,
                      *[f"[dim]{c}[/]" if c == NOT_A_SETTING else c for c in cells])
    return table

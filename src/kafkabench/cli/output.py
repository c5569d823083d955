"""How the CLI talks to people: results on stdout, everything else on stderr, one-line errors."""

from __future__ import annotations

from typing import NoReturn

import typer
from rich.console import Console
from rich.markup import escape

# tables are wide: when stdout is a file or a pipe, do not squeeze them into 80 columns
out = Console(highlight=False, soft_wrap=True)
if not out.is_terminal:
    out = Console(highlight=False, soft_wrap=True, width=200)
err = Console(stderr=True, highlight=False, soft_wrap=True)


def note(message: str) -> None:
    err.print(escape(message), style="dim")


def abort(message: str, code: int = 1) -> NoReturn:
    err.print(f"[bold red]error:[/] {escape(message)}")
    raise typer.Exit(code)

"""How the CLI talks to people: results on stdout, everything else on stderr, one-line errors."""

from __future__ import annotations

from typing import NoReturn

import typer
from rich.console import Console

out = Console(highlight=False, soft_wrap=True)
err = Console(stderr=True, highlight=False, soft_wrap=True)


def note(message: str) -> None:
    err.print(message, style="dim")


def abort(message: str, code: int = 1) -> NoReturn:
    err.print(f"[bold red]error:[/] {message}", soft_wrap=True)
    raise typer.Exit(code)

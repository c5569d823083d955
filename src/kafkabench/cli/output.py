"""How the CLI talks to people: results on stdout, everything else on stderr, one-line errors."""

from __future__ import annotations

from typing import NoReturn

import typer
from rich.console import Console
from rich.markup import escape

# when stdout is a file or a pipe, lay tables out for 120 columns, not rich's 80 (a lab's tables fit 100; --wide
# ones may not, and are cut no narrower than a log viewer shows)
out = Console(highlight=False, emoji=False, soft_wrap=True)
if not out.is_terminal:
    out = Console(highlight=False, emoji=False, soft_wrap=True, width=120)
err = Console(stderr=True, highlight=False, emoji=False, soft_wrap=True)
if not err.is_terminal:  # a failed lab's tables go there
    err = Console(stderr=True, highlight=False, emoji=False, soft_wrap=True, width=120)


def note(message: str) -> None:
    err.print(escape(message), style="dim")


def abort(message: str, code: int = 1) -> NoReturn:
    err.print(f"[bold red]error:[/] {escape(message)}")
    raise typer.Exit(code)

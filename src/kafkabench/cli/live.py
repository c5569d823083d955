"""A lab's events on the terminal while it runs: notes and window lines above, one progress bar per part
(a client, a role, the cells) below, all on stderr."""

from __future__ import annotations

from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from kafkabench.cli.output import err, out
from kafkabench.core.events import Listener
from kafkabench.report.table import Table
from kafkabench.report.terminal import render, window_line


class Live(Listener):
    def __init__(self) -> None:
        self._bar = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                             console=err, transient=True)
        self._tasks: dict[str, int] = {}
        self.noted: set[str] = set()  # so the end of the run does not print a note twice

    def __enter__(self) -> Live:
        self._bar.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self._bar.__exit__(*exc)

    def stop(self) -> None:
        self._bar.stop()

    def note(self, message: str) -> None:
        self.noted.add(message)
        self._bar.console.print(f"[dim]{escape(message)}[/]", highlight=False)

    def window(self, role: str, entry) -> None:
        if isinstance(entry, Table):
            self._bar.console.print(render(entry))
        elif isinstance(entry, str):  # a line for logs (the monitor's --json-lines): stdout, as it is
            out.print(entry, markup=False, highlight=False, soft_wrap=True)
        else:
            self._bar.console.print(escape(window_line(role, entry)), highlight=False)

    def progress(self, done: float, total: float | None, label: str = "") -> None:
        if label not in self._tasks:
            self._tasks[label] = self._bar.add_task(label, total=total)
        self._bar.update(self._tasks[label], completed=min(done, total) if total else done, total=total)

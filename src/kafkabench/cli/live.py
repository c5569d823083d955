"""A lab's events on the terminal while it runs: notes and window lines above, one progress bar per part
(a client, a role, the cells) below, all on stderr. A watch's Screen is a table updated in place above the bars on a
terminal, and its lines on stdout anywhere else (a log, a pipe)."""

from __future__ import annotations

from typing import Iterable

from rich.console import Console, Group, RenderableType
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from kafkabench.cli import output
from kafkabench.core.events import Listener
from kafkabench.report.table import Screen, Table
from kafkabench.report.terminal import render, window_line


class _Bars(Progress):
    """The progress bars with a view above them in the same live display: rich keeps one live display per console,
    and a second one would fight the bars for the cursor."""

    view: RenderableType | None = None

    def get_renderables(self) -> Iterable[RenderableType]:
        if self.view is not None:
            yield self.view
        yield from super().get_renderables()


class Live(Listener):
    def __init__(self, out: Console = output.out, err: Console = output.err, wide: bool = False) -> None:
        self._out, self._wide = out, wide
        self._bar = _Bars(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                          console=err, transient=True)
        # in place only where a person watches both streams; where either goes to a file, the file gets the lines
        self._in_place = out.is_terminal and err.is_terminal and not err.is_dumb_terminal
        self._tasks: dict[str, int] = {}
        self.noted: set[str] = set()  # so the end of the run does not print a note twice

    def __enter__(self) -> Live:
        self._bar.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def stop(self) -> None:
        """The bars go (they are transient); the last table of a watch stays, printed where it was shown."""
        view, self._bar.view = self._bar.view, None
        self._bar.stop()
        if view is not None:
            self._bar.console.print(view)

    def note(self, message: str) -> None:
        self.noted.add(message)
        self._bar.console.print(f"[dim]{escape(message)}[/]", highlight=False)

    def window(self, role: str, entry) -> None:
        if isinstance(entry, Screen):
            self._screen(entry)
        elif isinstance(entry, Table):
            self._bar.console.print(render(entry, self._wide))
        elif isinstance(entry, str):  # a line for logs (the monitor's --json-lines): stdout, as it is
            self._out.print(entry, markup=False, highlight=False, soft_wrap=True)
        else:
            self._bar.console.print(escape(window_line(role, entry)), highlight=False)

    def _screen(self, screen: Screen) -> None:
        if self._in_place:
            # drawn at the bars' next refresh, at most 10 a second
            self._bar.view = Group(*(render(table, self._wide) for table in screen.tables))
            return
        for line in screen.lines:
            self._out.print(line, markup=False, highlight=False, soft_wrap=True)

    def progress(self, done: float, total: float | None, label: str = "") -> None:
        if label not in self._tasks:
            self._tasks[label] = self._bar.add_task(label, total=total)
        self._bar.update(self._tasks[label], completed=min(done, total) if total else done, total=total)

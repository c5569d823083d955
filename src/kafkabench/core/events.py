"""One events object for everything a run reports while it runs (Locust's single request event, with the
terminal, the plan runner, tests and later a Prometheus exporter as listeners).

A lab calls `events.note(...)`, `events.progress(...)`, `events.window(...)`; a plan runner adds
`cell_started` / `cell_finished`. Every listener method has a no-op default, so a listener implements only
what it shows.
"""

from __future__ import annotations

from typing import Any


class Listener:
    """No-op defaults: subclass and override what you listen to."""

    def note(self, message: str) -> None:
        """A line a person should read (a setting kafkabench raised, a client skipped)."""

    def progress(self, done: float, total: float | None, label: str = "") -> None:
        """How far one part of the run is (`label`: a client, a role, "cells"); total None when unknown."""

    def window(self, role: str, entry: Any) -> None:
        """One window of a streaming run: a core.timeline.TimelineEntry, or what a watch shows per interval (a
        report.table.Table, or a ready line such as the monitor's JSON)."""

    def cell_started(self, cell: Any) -> None:
        """A plan cell starts."""

    def cell_finished(self, cell: Any, outcome: Any, document: Any) -> None:
        """A plan cell ended (ok, failed or interrupted), with its result document if it wrote one."""


class Events(Listener):
    """Fans every event out to its listeners, in the order they were added."""

    def __init__(self, *listeners: Listener) -> None:
        self._listeners = list(listeners)

    def add(self, listener: Listener) -> Events:
        self._listeners.append(listener)
        return self

    def note(self, message: str) -> None:
        for listener in self._listeners:
            listener.note(message)

    def progress(self, done: float, total: float | None, label: str = "") -> None:
        for listener in self._listeners:
            listener.progress(done, total, label)

    def window(self, role: str, entry: Any) -> None:
        for listener in self._listeners:
            listener.window(role, entry)

    def cell_started(self, cell: Any) -> None:
        for listener in self._listeners:
            listener.cell_started(cell)

    def cell_finished(self, cell: Any, outcome: Any, document: Any) -> None:
        for listener in self._listeners:
            listener.cell_finished(cell, outcome, document)


SILENT = Events()  # checks before a run, set-up a run does not report

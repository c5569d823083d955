from io import StringIO

import pytest
from rich.console import Console

from kafkabench.cli.live import Live
from kafkabench.report.table import Screen, Table, columns
from kafkabench.report.terminal import render


def screen(i: int, lines: list[str] = ()) -> Screen:
    table = Table(f"t={i / 2:.1f} s", columns(["broker", "state", "sent", "lost"], ("broker", "state")))
    for broker in range(1, 4):
        table.add(str(broker), "up", "2", "0")
    groups = Table("groups", columns(["group", "lag"], ("group",)))
    groups.add("g1", f"{i:,}")
    return Screen([table, groups], list(lines))


def test_off_a_terminal_a_screen_prints_only_its_lines_on_stdout():
    out, err = Console(file=StringIO(), width=200), Console(file=StringIO(), width=200)
    with Live(out, err) as live:
        live.progress(1, 10, "watch")
        for i in range(1, 6):
            live.window("monitor", screen(i, ["t=1.0 s  broker 2: up -> down (fenced)"] if i == 2 else []))
    assert out.file.getvalue() == "t=1.0 s  broker 2: up -> down (fenced)\n"
    assert "t=" not in err.file.getvalue() and "broker" not in err.file.getvalue()


def test_on_a_terminal_screens_are_one_table_updated_in_place_and_the_last_stays(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("TERM", "xterm-256color")
    terminal = Console(file=StringIO(), force_terminal=True, width=100)
    windows = 200
    with Live(terminal, terminal) as live:
        for i in range(1, windows + 1):
            live.progress(i, windows, "watch")
            live.window("monitor", screen(i, [f"t={i / 2:.1f} s  broker 1: up"]))
    shown = terminal.file.getvalue()
    assert len(shown) < windows / 10 * len(alone(screen(1)))
    assert "broker 1: up" not in shown  # the lines are for logs
    assert shown.rstrip().endswith(alone(screen(windows)).rstrip())  # the bars went, the last table stayed


def alone(s: Screen) -> str:
    """The screen's tables printed once, as a terminal 100 columns wide gets them."""
    console = Console(file=StringIO(), force_terminal=True, width=100)
    for table in s.tables:
        console.print(render(table))
    return console.file.getvalue()

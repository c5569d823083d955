"""Child processes kafkabench starts: they must never outlive a crashed parent by accident, and are told from
the later processes given their pids.

Linux sends a child its parent-death signal when the *thread* that forked it exits, not the process. A broker
restarted by a thread that then ends (a fault thread, a pool worker) would be killed with it. So every child that
dies with us is forked by one thread that lives as long as this process does.

A process is known by its pid and its start, in seconds from boot (`started`), as psutil itself tells its own
processes apart. Not by psutil's `create_time`: that adds the boot time as the wall clock has it now, so a step of the
clock (NTP, a virtual machine resumed) moves it, and every process recorded before the step looks gone. One of 21 s
in CI did that: its running brokers were "not running", left unstopped, and their isolated network removed as stale.
"""

from __future__ import annotations

import ctypes
import os
import signal
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import psutil

PR_SET_PDEATHSIG = 1
LINUX = sys.platform.startswith("linux")
CLOCK_TICKS = os.sysconf("SC_CLK_TCK") if LINUX else 100
_FORKER = ThreadPoolExecutor(1, thread_name_prefix="kafkabench-forker")  # idle, it waits for work until we exit


def _die_with_parent() -> None:
    """In the child: get SIGKILL when the process that started us dies, so a crashed run leaks nothing."""
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)


def popen(command: list[str], *, die_with_parent: bool = True, **options) -> subprocess.Popen:
    """subprocess.Popen(command, **options); with `die_with_parent` (where the platform supports it), the child is
    killed when this process dies, from whichever thread it was asked for."""
    if not die_with_parent or not LINUX:
        return subprocess.Popen(command, **options)
    return _FORKER.submit(subprocess.Popen, command, preexec_fn=_die_with_parent, **options).result()


def started(pid: int) -> float:
    """Process `pid`'s start in seconds from boot (Linux: /proc's start time, which no clock step moves; elsewhere
    psutil's create_time); psutil.NoSuchProcess when there is none."""
    import psutil  # on use: the command line starts without it

    if not LINUX:
        return psutil.Process(pid).create_time()
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            fields = stat.read().rsplit(b")", 1)[1].split()  # the name, in parentheses, may hold anything
    except (FileNotFoundError, ProcessLookupError):
        raise psutil.NoSuchProcess(pid) from None
    return int(fields[19]) / CLOCK_TICKS  # field 22, counted from the state (field 3)


def started_from(create_time: float) -> float:
    """`started` from psutil's create_time, as an older kafkabench recorded it: right unless the clock was stepped
    since, when the process looks gone (as it did to that version)."""
    import psutil

    if not LINUX:
        return create_time
    return round((create_time - psutil.boot_time()) * CLOCK_TICKS) / CLOCK_TICKS


def running(pid: int | None, start: float | None) -> psutil.Process | None:
    """The process `pid` if it is the one that started at `start` (`started`) and has not exited; else None (a
    recycled pid is another process, a zombie has exited)."""
    import psutil

    if pid is None or start is None:
        return None
    try:
        process = psutil.Process(pid)
        return process if started(pid) == start and process.status() != psutil.STATUS_ZOMBIE else None
    except psutil.NoSuchProcess:
        return None

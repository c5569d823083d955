"""Child processes kafkabench starts: they must never outlive a crashed parent by accident.

Linux sends a child its parent-death signal when the *thread* that forked it exits, not the process. A broker
restarted by a thread that then ends (a fault thread, a pool worker) would be killed with it. So every child that
dies with us is forked by one thread that lives as long as this process does.
"""

from __future__ import annotations

import ctypes
import signal
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

PR_SET_PDEATHSIG = 1
_FORKER = ThreadPoolExecutor(1, thread_name_prefix="kafkabench-forker")  # idle, it waits for work until we exit


def _die_with_parent() -> None:
    """In the child: get SIGKILL when the process that started us dies, so a crashed run leaks nothing."""
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)


def popen(command: list[str], *, die_with_parent: bool = True, **options) -> subprocess.Popen:
    """subprocess.Popen(command, **options); with `die_with_parent` (where the platform supports it), the child is
    killed when this process dies, from whichever thread it was asked for."""
    if not die_with_parent or not sys.platform.startswith("linux"):
        return subprocess.Popen(command, **options)
    return _FORKER.submit(subprocess.Popen, command, preexec_fn=_die_with_parent, **options).result()

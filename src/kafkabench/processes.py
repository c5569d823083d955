"""Child processes kafkabench starts: they must never outlive a crashed parent by accident."""

from __future__ import annotations

import ctypes
import signal
import sys
from typing import Callable

PR_SET_PDEATHSIG = 1


def _die_with_parent() -> None:
    """In the child: get SIGKILL when the process that started us dies, so a crashed run leaks nothing."""
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)


def die_with_parent_hook() -> Callable[[], None] | None:
    """A `preexec_fn` for subprocess.Popen where the platform supports it."""
    return _die_with_parent if sys.platform.startswith("linux") else None

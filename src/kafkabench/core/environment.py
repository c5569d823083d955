"""What a result must record about where it was measured."""

from __future__ import annotations

import os
import platform

import psutil

from kafkabench import __version__

# set by a test suite (kafkabench's own sets it): the JVMs kafkabench starts, its Java workers and the brokers it
# starts for a run, are tuned for a life of seconds (the C1 compiler only, no heap touched up front). Never for a
# measurement: every result made under it says so
SHORT_LIVED_JVMS = "KAFKABENCH_SHORT_LIVED_JVMS"


def short_lived_jvms() -> bool:
    return os.environ.get(SHORT_LIVED_JVMS) == "1"


def short_lived_warning() -> str | None:
    if not short_lived_jvms():
        return None
    return (f"{SHORT_LIVED_JVMS}=1: the Java workers and the brokers kafkabench started ran the C1 compiler only, "
            "their heaps not touched up front: a test's JVMs, not a measurement's")


def machine() -> dict:
    return {
        "cores": os.cpu_count(),
        "memory_gb": round(psutil.virtual_memory().total / 2**30, 1),
        "os": f"{platform.system()} {platform.release()}",
        "python": platform.python_version(),
        "hostname": platform.node(),
    }


def tool() -> dict:
    return {"name": "kafkabench", "version": __version__}

"""What a result must record about where it was measured."""

from __future__ import annotations

import os
import platform

import psutil

from kafkabench import __version__


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

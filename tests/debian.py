"""Debian packages the tests need (chromium for the report, prometheus and promtool for the monitor), installed once
when missing, where the tests run as root with apt-get, so a fresh machine runs those tests instead of skipping them.
Two pytest workers may ask at once: one install at a time, through a lock both see, and apt waits for dpkg's own
lock rather than failing when something else on the machine holds it."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from filelock import FileLock

CHROMIUM = Path("/usr/bin/chromium")
PROMETHEUS, PROMTOOL = Path("/usr/bin/prometheus"), Path("/usr/bin/promtool")
INSTALL_TIMEOUT_S = 900
LOCK = Path(tempfile.gettempdir()) / "kafkabench-tests-apt.lock"


def install(package: str, *binaries: Path) -> str | None:
    """`package` installed unless all its `binaries` exist; the reason it cannot be had, else None."""
    if all(path.exists() for path in binaries):
        return None
    if shutil.which("apt-get") is None or os.geteuid() != 0:
        return f"{package} is missing and installing it needs root and apt-get"
    try:
        with FileLock(LOCK, timeout=INSTALL_TIMEOUT_S):
            if all(path.exists() for path in binaries):  # the other worker installed it while this one waited
                return None
            done = _apt_get("install", "-y", "--no-install-recommends", package)
            if done.returncode != 0:  # a fresh machine's package lists may not know it yet: refresh them once
                _apt_get("update")
                done = _apt_get("install", "-y", "--no-install-recommends", package)
    except subprocess.TimeoutExpired:
        return f"apt-get install {package} took longer than {INSTALL_TIMEOUT_S} s"
    if done.returncode != 0 or not all(path.exists() for path in binaries):
        return f"apt-get install {package} failed: {(done.stderr.strip().splitlines() or ['?'])[-1]}"
    return None


def _apt_get(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["apt-get", "-o", f"DPkg::Lock::Timeout={INSTALL_TIMEOUT_S // 2}", *args],
                          env={**os.environ, "DEBIAN_FRONTEND": "noninteractive"},
                          capture_output=True, text=True, timeout=INSTALL_TIMEOUT_S)

"""Debian's prometheus package (the server and promtool) for the tests that need a real Prometheus: installed once
when missing, where the tests run as root with apt-get, so a fresh machine runs them instead of skipping them."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

PROMETHEUS, PROMTOOL = Path("/usr/bin/prometheus"), Path("/usr/bin/promtool")
INSTALL_TIMEOUT_S = 600


def install_prometheus() -> str | None:
    """Debian's prometheus (server and promtool) when missing and we may; the reason it cannot be had, else None."""
    if PROMETHEUS.exists() and PROMTOOL.exists():
        return None
    if shutil.which("apt-get") is None or os.geteuid() != 0:
        return "prometheus is missing and installing it needs root and apt-get"
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    install = ["apt-get", "install", "-y", "--no-install-recommends", "prometheus"]
    done = subprocess.run(install, env=env, capture_output=True, text=True, timeout=INSTALL_TIMEOUT_S)
    if done.returncode != 0:  # a fresh machine's package lists may not know it yet
        subprocess.run(["apt-get", "update"], env=env, capture_output=True, timeout=INSTALL_TIMEOUT_S)
        done = subprocess.run(install, env=env, capture_output=True, text=True, timeout=INSTALL_TIMEOUT_S)
    if done.returncode != 0:
        return f"apt-get install prometheus failed: {(done.stderr.strip().splitlines() or ['?'])[-1]}"
    return None

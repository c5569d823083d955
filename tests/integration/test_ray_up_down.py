"""`kafkabench ray up` / `down` as a user runs them: a cluster on loopback with a token of its own, which `down` removes
(a one-node cluster of this module's own, in a directory of its own)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

pytest.importorskip("ray", reason="the ray extra is not installed")
from kafkabench.on_ray.local_access import is_loopback  # noqa: E402
from kafkabench.on_ray.local_cluster import LocalRayCluster  # noqa: E402

pytestmark = pytest.mark.integration


def kafkabench(*arguments: str, directory) -> subprocess.CompletedProcess:
    env = {name: value for name, value in os.environ.items() if not name.startswith("RAY_AUTH_")}
    return subprocess.run([sys.executable, "-m", "kafkabench", "ray", *arguments, "--dir", str(directory)],
                          stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=180,
                          env={**env, "COLUMNS": "500"})


def test_ray_up_starts_on_loopback_with_a_token_of_its_own_and_ray_down_removes_it(tmp_path):
    directory = tmp_path / "ray"
    up = kafkabench("up", "--nodes", "1", directory=directory)
    try:
        assert up.returncode == 0, up.stderr
        address = up.stdout.strip()
        state = json.loads((directory / "ray.json").read_text())
        token = directory / "auth_token"
        assert (state["address"], state["token_file"], state["loopback"]) == (address, str(token), True)
        assert oct(token.stat().st_mode & 0o777) == "0o600" and len(token.read_text()) == 64
        ports = LocalRayCluster.attach(directory).open_ports()
        assert ports and all(is_loopback(p.host) for p in ports), ports
        lines = up.stderr.splitlines()
        assert lines[2] == (f"Ray listens on loopback only: {len(ports)} ports of 127.0.0.1 "
                            f"({', '.join(sorted({p.process for p in ports}))})"), lines
        assert lines[3] == (f"token authentication on: its token is in {token} (mode 0600), which kafkabench finds "
                            f"for {address}; `kafkabench ray down` removes it"), lines
        assert "/work/shared" not in up.stdout + up.stderr
    finally:
        down = kafkabench("down", directory=directory)
    assert down.returncode == 0, down.stderr
    assert down.stderr.strip() == f"Ray at {address} stopped (2 processes); its token removed"
    assert sorted(path.name for path in directory.iterdir()) == ["head.log", "node-1.log"]

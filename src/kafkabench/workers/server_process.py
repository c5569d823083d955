"""The receiving side of the http and tcp baselines: a server in its own process, started by the worker."""

from __future__ import annotations

import argparse
import select
import subprocess
import sys
from typing import Callable

from kafkabench.processes import popen
from kafkabench.workers.ping_pong import ExchangeFailed

START_TIMEOUT_S = 30


class ServerProcess:
    """`python -m <module> serve --size N --sha256 H`; the server prints its port on its first line."""

    def __init__(self, module: str, size: int, sha256: str) -> None:
        self._popen = popen(
            [sys.executable, "-m", module, "serve", "--size", str(size), "--sha256", sha256],
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=None, text=True,
        )
        ready, _, _ = select.select([self._popen.stdout], [], [], START_TIMEOUT_S)
        line = self._popen.stdout.readline() if ready else ""
        if not line.strip().isdigit():
            self.stop()
            raise ExchangeFailed("failure", f"the {module.rsplit('.', 1)[-1]} server did not start within {START_TIMEOUT_S} s")
        self.port = int(line)

    def stop(self) -> None:
        if self._popen.poll() is None:
            self._popen.kill()
        self._popen.wait(timeout=10)


def serve_main(serve: Callable[[int, str], None]) -> None:
    """The server side's command line: `serve --size N --sha256 H`."""
    parser = argparse.ArgumentParser()
    parser.add_argument("mode", choices=["serve"])
    parser.add_argument("--size", type=int, required=True)
    parser.add_argument("--sha256", required=True)
    arguments = parser.parse_args()
    serve(arguments.size, arguments.sha256)

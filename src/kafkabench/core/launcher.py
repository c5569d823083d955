"""How a worker process is started and talked to: the seam between the labs and where workers run.

Labs never start a process or name a host path themselves: they ask a launcher for a worker of a client and
for the name under which a worker will find a file (a payload, a records file). Today's launcher starts a
local subprocess and shares files by their own path; a launcher on a distributed engine would start the
worker on another machine and copy the file there, without a lab changing.
"""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

from pydantic import BaseModel

from kafkabench.core.worker_process import WorkerProcess


class Worker(Protocol):
    """One worker as a lab sees it: core.protocol messages in and out, every wait bounded."""

    name: str

    def send(self, message: BaseModel) -> None: ...
    def receive(self, expected: type, timeout_s: float): ...
    def next_message(self, timeout_s: float) -> BaseModel | None: ...
    def wait_exit(self, timeout_s: float) -> int | None: ...
    def stop(self, timeout_s: float = 10) -> None: ...


class WorkerLauncher(Protocol):
    def start(self, name: str, client: str) -> Worker:
        """A running worker for `client` (e.g. "confluent", "java", "tcp"), waiting for its task."""
        ...

    def share(self, path: Path) -> str:
        """Where a worker started by this launcher finds the file at `path` on this host."""
        ...


class LocalWorkerLauncher:
    """Workers as subprocesses of this one, on this host; a file is where it is."""

    def start(self, name: str, client: str) -> Worker:
        from kafkabench.clients import worker_command  # the Java worker is compiled on first use

        return WorkerProcess(name, worker_command(client))

    def share(self, path: Path) -> str:
        return str(path.resolve())


LOCAL_WORKERS = LocalWorkerLauncher()

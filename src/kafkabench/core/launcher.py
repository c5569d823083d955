"""How a worker process is started and talked to: the seam between the labs and where workers run.

Labs never start a process or name a host path themselves: they ask a launcher for a worker of a client and
for the name under which a worker will find a file (a payload, a records file). Today's launcher starts a
local subprocess and shares files by their own path; a launcher on a distributed engine would start the
worker on another machine and copy the file there, without a lab changing.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from pydantic import BaseModel

from kafkabench.core.worker_forks import FORKS
from kafkabench.core.worker_process import WorkerProcess
from kafkabench.errors import ConfigError


class Worker(Protocol):
    """One worker as a lab sees it: core.protocol messages in and out, every wait bounded."""

    name: str
    placement: dict  # where it runs, for the result: {"launcher": "local"}, or a Ray node and its clock offset

    def send(self, message: BaseModel) -> None: ...
    def receive(self, expected: type, timeout_s: float): ...
    def next_message(self, timeout_s: float) -> BaseModel | None: ...
    def wait_exit(self, timeout_s: float) -> int | None: ...
    def stop(self, timeout_s: float = 10) -> None: ...


class WorkerLauncher(Protocol):
    name: str  # local | ray
    # True when workers may run on hosts with clocks of their own: producer i and consumer i then share a node
    # (reserve) and its partitions, so each e2e latency is read on one node's clock
    pairs_by_node: bool

    def reserve(self, count: int) -> None:
        """The next `count` workers are started together: place them all now, or raise saying what could not be."""
        ...

    def start(self, name: str, client: str) -> Worker:
        """A running worker for `client` (e.g. "confluent", "java", "tcp"), waiting for its task."""
        ...

    def share(self, path: Path) -> str:
        """Where a worker started by this launcher finds the file (or the directory, for its outputs) at `path`
        on this host."""
        ...

    def collect(self, path: Path) -> None:
        """Bring back into the directory `path`, shared before, what the workers wrote there."""
        ...


class LocalWorkerLauncher:
    """Workers as subprocesses of this one, on this host; a file is where it is."""

    name = "local"
    pairs_by_node = False  # one host, one clock

    def reserve(self, count: int) -> None:
        pass  # a subprocess is always placed

    def start(self, name: str, client: str) -> Worker:
        if client != "java" and sys.platform.startswith("linux"):  # fork, and die with the server, where Linux does
            return WorkerProcess(name, process=FORKS.spawn(client))
        from kafkabench.clients import worker_command  # the Java worker is compiled on first use

        return WorkerProcess(name, worker_command(client))

    def share(self, path: Path) -> str:
        return str(path.resolve())

    def collect(self, path: Path) -> None:
        pass  # the workers wrote it where it is


@dataclass(frozen=True)
class Launcher:
    """Which launcher a run asked for (`--launcher`, `--ray-address`, `--spread`, `--cross-host-e2e`, or a plan's
    `launcher:`)."""

    name: str = "local"  # local | ray
    ray_address: str | None = None
    spread: str = "spread"  # ray: spread (one worker per node) | pack
    cross_host_e2e: bool = False  # ray: consumers read what any producer wrote, on whichever node

    def __post_init__(self) -> None:
        if self.name not in ("local", "ray"):
            raise ConfigError(f"--launcher {self.name}: expected local or ray")

    @contextlib.contextmanager
    def open(self) -> Iterator[WorkerLauncher]:
        """The launcher itself, for one run: a Ray one is connected for the run and cleaned up after it."""
        if self.name == "local":
            yield LOCAL_WORKERS
            return
        try:
            from kafkabench.on_ray.launcher import RayLauncher
        except ImportError:
            raise ConfigError("--launcher ray needs Ray: pip install 'kafkabench[ray]'") from None
        with RayLauncher(self.ray_address, self.spread, pairs_by_node=not self.cross_host_e2e) as launcher:
            yield launcher


LOCAL_WORKERS = LocalWorkerLauncher()

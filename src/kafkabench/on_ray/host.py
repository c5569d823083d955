"""What runs inside a Ray actor on a node: one worker process of the node's own, its protocol lines, its files.

A plain class, so it can be tried without Ray; the launcher turns it into an actor (`ray.remote(WorkerHost)`).
The worker is the same process as a local run's (`clients.worker_command`, with this node's Python), started in
a process group of its own: it ends when its stdin closes (the actor gone), and `stop` kills the group.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import queue
import shutil
import signal
import subprocess
import threading
import time
from collections import deque
from pathlib import Path

from kafkabench.on_ray.clock import ClockEcho

STDERR_LINES_KEPT = 40


def sha256_of(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class WorkerHost:
    def __init__(self) -> None:
        self._process: subprocess.Popen | None = None
        self._lines: queue.Queue[str | None] = queue.Queue()
        self._stderr: deque[str] = deque(maxlen=STDERR_LINES_KEPT)
        self._echo: ClockEcho | None = None

    # ---- about the node -------------------------------------------------------------------------------

    def clocks(self) -> tuple[int, int]:
        """(wall, monotonic) ns on this node, read back to back."""
        return time.time_ns(), time.monotonic_ns()

    def clock_port(self) -> int:
        """The UDP port of this node's clock echo (on_ray.clock), started on first use, on the node's address."""
        self._echo = self._echo or ClockEcho(self.node()[1])
        return self._echo.port

    def node(self) -> tuple[str, str]:
        """(Ray node id, the node's address)."""
        import ray

        return ray.get_runtime_context().get_node_id(), ray.util.get_node_ip_address()

    # ---- files ----------------------------------------------------------------------------------------

    def put_file(self, path: str, data: bytes, sha256: str) -> None:
        """Write a shared file where the worker will look for it, checked by hash; already there (a worker beside
        this one wrote it), it is left as it is."""
        if sha256_of(data) != sha256:
            raise ValueError(f"{path}: arrived with another sha256 than it left with")
        target = Path(path)
        with contextlib.suppress(OSError):
            if sha256_of(target.read_bytes()) == sha256:
                return
        target.parent.mkdir(parents=True, exist_ok=True)
        partial = target.with_name(f"{target.name}.{os.getpid()}-{threading.get_ident()}.part")  # its own, then renamed
        partial.write_bytes(data)
        partial.replace(target)

    def make_dir(self, path: str) -> None:
        Path(path).mkdir(parents=True, exist_ok=True)

    def remove_dir(self, path: str) -> None:
        shutil.rmtree(path, ignore_errors=True)

    def files_under(self, path: str) -> dict[str, tuple[bytes, str]]:
        """Every file below `path` (relative name -> (content, sha256)): a worker's outputs, to collect."""
        root = Path(path)
        found = {}
        for file in sorted(p for p in root.rglob("*") if p.is_file()) if root.is_dir() else []:
            data = file.read_bytes()
            found[str(file.relative_to(root))] = (data, sha256_of(data))
        return found

    # ---- the worker process ---------------------------------------------------------------------------

    def start(self, client: str, command: list[str] | None = None) -> int:
        """Start the worker for `client` with this node's Python, or `command` (the Java worker, from jars the
        launcher shared); its pid."""
        from kafkabench.clients import worker_command

        self._process = subprocess.Popen(
            command or worker_command(client), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            bufsize=1, start_new_session=True)
        threading.Thread(target=self._pump_stdout, daemon=True).start()
        threading.Thread(target=self._pump_stderr, daemon=True).start()
        return self._process.pid

    def write(self, line: str) -> bool:
        """Send one protocol line; False when the worker no longer reads."""
        try:
            self._process.stdin.write(line)
            self._process.stdin.flush()
            return True
        except (BrokenPipeError, OSError, ValueError):
            return False

    def read(self, wait_s: float, most: int = 1000) -> list[str] | None:
        """The worker's next lines, waiting up to `wait_s` for the first; None once its stdout has ended."""
        lines: list[str] = []
        try:
            first = self._lines.get(timeout=wait_s)
        except queue.Empty:
            return lines
        for line in [first, *self._drain(most - 1)]:
            if line is None:
                self._lines.put(None)  # the end stays the end for the next read
                return lines or None
            lines.append(line)
        return lines

    def exit_code(self, wait_s: float) -> int | None:
        try:
            return self._process.wait(timeout=wait_s)
        except subprocess.TimeoutExpired:
            return None

    def stderr_tail(self) -> list[str]:
        return [line for line in self._stderr if line.strip()]

    def stop(self, wait_s: float = 10) -> int | None:
        """Close the worker's stdin (it ends by itself), then kill its process group if it has not; the exit code."""
        if self._echo is not None:
            self._echo.close()
        if self._process is None:
            return None
        try:
            self._process.stdin.close()
        except OSError:
            pass
        code = self.exit_code(wait_s)
        if code is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self._process.pid, signal.SIGKILL)
            code = self.exit_code(10)
        return code

    def _drain(self, most: int) -> list[str | None]:
        drained = []
        while len(drained) < most:
            try:
                drained.append(self._lines.get_nowait())
            except queue.Empty:
                break
        return drained

    def _pump_stdout(self) -> None:
        for line in self._process.stdout:
            self._lines.put(line)
        self._lines.put(None)

    def _pump_stderr(self) -> None:
        for line in self._process.stderr:
            self._stderr.append(line)

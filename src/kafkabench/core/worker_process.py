"""The orchestrator's side of a worker: start it, talk core.protocol over its stdio, with a deadline on every wait."""

from __future__ import annotations

import collections
import queue
import subprocess
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

from pydantic import BaseModel, ValidationError

from kafkabench.core import protocol
from kafkabench.core.protocol import Error, Outcome
from kafkabench.core.worker_forks import ForkedProcess
from kafkabench.errors import KafkabenchError
from kafkabench.processes import popen

M = TypeVar("M", bound=BaseModel)
STDERR_LINES_KEPT = 40


class WorkerFailed(KafkabenchError):
    """A worker reported an error, died, or said nothing in time. `partial` holds what it measured."""

    def __init__(self, worker: str, message: str, kind: str = "failure", partial: Outcome | None = None) -> None:
        super().__init__(f"{worker}: {message}")
        self.worker = worker
        self.reason = message
        self.kind = kind
        self.partial = partial


def stop_all(workers: list) -> None:
    """Every worker (a WorkerProcess, or any launcher's worker) stopped, side by side: each may take a second or two
    to end (a client's close, a dead node's call failing)."""
    if workers:
        with ThreadPoolExecutor(len(workers), thread_name_prefix="stop") as pool:
            list(pool.map(lambda worker: worker.stop(), workers))


class WorkerProcess:
    """A worker started from `command`, or one already started (`process`: a Python worker forked by
    core.worker_forks)."""

    def __init__(self, name: str, command: list[str] | None = None,
                 process: subprocess.Popen | ForkedProcess | None = None) -> None:
        self.name = name
        self._popen = process or popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, bufsize=1,
            start_new_session=True,  # Ctrl-C reaches the orchestrator, which then collects what each worker has
        )
        self.pid = self._popen.pid
        self.placement = {"launcher": "local", "pid": self.pid}
        self._lines: queue.Queue[str | None] = queue.Queue()
        self._stderr: collections.deque[str] = collections.deque(maxlen=STDERR_LINES_KEPT)
        threading.Thread(target=self._pump_stdout, daemon=True).start()
        threading.Thread(target=self._pump_stderr, daemon=True).start()

    def send(self, message: BaseModel) -> None:
        try:
            self._popen.stdin.write(protocol.encode(message))
            self._popen.stdin.flush()
        except (BrokenPipeError, OSError) as exc:
            raise WorkerFailed(self.name, f"worker is gone ({self._why_gone()})") from exc

    def receive(self, expected: type[M], timeout_s: float) -> M:
        """The next message, which must be `expected`; an `error` from the worker raises WorkerFailed."""
        message = self.next_message(timeout_s)
        if message is None:
            raise WorkerFailed(self.name, f"worker said nothing for {timeout_s:g} s", kind="timeout")
        if not isinstance(message, expected):
            raise WorkerFailed(self.name, f"worker sent {message.type!r} where {expected.__name__.lower()!r} was due")
        return message

    def next_message(self, timeout_s: float) -> BaseModel | None:
        """Any next message within the timeout (None if there is none yet); an `error` raises WorkerFailed."""
        try:
            line = self._lines.get(timeout=timeout_s) if timeout_s > 0 else self._lines.get_nowait()
        except queue.Empty:
            return None
        if line is None:
            raise WorkerFailed(self.name, f"worker exited ({self._why_gone()})")
        try:
            message = protocol.decode(line)
        except (ValidationError, ValueError) as exc:
            raise WorkerFailed(self.name, f"worker sent something that is not the protocol: {line.strip()[:120]!r}") from exc
        if isinstance(message, Error):
            raise WorkerFailed(self.name, message.message, kind=message.kind, partial=message.partial)
        return message

    def wait_exit(self, timeout_s: float) -> int | None:
        """The exit code once the process ended by itself within the timeout, else None (it still runs)."""
        try:
            return self._popen.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            return None

    def stop(self, timeout_s: float = 10) -> None:
        try:
            self._popen.stdin.close()
        except OSError:
            pass
        try:
            self._popen.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            self._popen.kill()
            self._popen.wait(timeout=10)

    def _why_gone(self) -> str:
        try:
            code = self._popen.wait(timeout=2)
        except subprocess.TimeoutExpired:
            code = None
        tail = [line for line in self._stderr if line.strip()]
        last = f"; last output: {tail[-1].strip()[:200]}" if tail else ""
        return f"exit code {code}{last}"

    def _pump_stdout(self) -> None:
        for line in self._popen.stdout:
            self._lines.put(line)
        self._lines.put(None)

    def _pump_stderr(self) -> None:
        for line in self._popen.stderr:
            self._stderr.append(line)

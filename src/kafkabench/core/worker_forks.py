"""Python workers forked from a server that has imported them once (kafkabench.workers.fork_server), rather than each
started as a new interpreter that imports them again: 0.13 CPU-s a worker instead of 0.40, answering in 6 ms instead
of 250, once the server runs (benchmarks/worker_forks.py). One server per orchestrator process, started with its first
Python worker.

A forked worker is handed back as a `ForkedProcess`: the part of `subprocess.Popen` a WorkerProcess uses (pid,
stdio, wait, kill), its exit code as Popen gives it, reported by the server that reaped it.
"""

from __future__ import annotations

import atexit
import contextlib
import io
import json
import os
import signal
import socket
import subprocess
import sys
import threading

from kafkabench.errors import KafkabenchError
from kafkabench.processes import popen

SERVER = [sys.executable, "-m", "kafkabench.workers.fork_server"]
FORK_TIMEOUT_S = 60.0  # the server's own start (its imports) on a loaded machine, then one fork
MESSAGE_BYTES = 4096
CLOSE_TIMEOUT_S = 5.0


class ForkedProcess:
    def __init__(self, pid: int, stdin: int, stdout: int, stderr: int, server: WorkerForks) -> None:
        self.pid, self._server = pid, server
        self.stdin = io.open(stdin, "w", buffering=1, encoding="utf-8")
        self.stdout = io.open(stdout, "r", encoding="utf-8")
        self.stderr = io.open(stderr, "r", encoding="utf-8", errors="replace")
        self.returncode: int | None = None

    def poll(self) -> int | None:
        self.returncode = self._server.exit_code(self.pid, 0)
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        code = self._server.exit_code(self.pid, timeout)
        if code is None:
            raise subprocess.TimeoutExpired(f"worker pid {self.pid}", timeout)
        self.returncode = code
        return code

    def kill(self) -> None:
        if self.poll() is None:  # once reaped, the pid may be another process's
            try:
                os.kill(self.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass


class WorkerForks:
    """The fork server of this process, started on first use; `spawn` is safe from any thread."""

    def __init__(self) -> None:
        self._lock = threading.Lock()  # one request and its answer at a time
        self._exits = threading.Condition()
        self._codes: dict[int, int] = {}
        self._pids: list[int] = []
        self._channel: socket.socket | None = None
        self._server: subprocess.Popen | None = None
        self._gone: str | None = None

    def spawn(self, client: str) -> ForkedProcess:
        """A Python worker for `client`, waiting for its task."""
        ends = [os.pipe() for _ in range(3)]  # the child's stdin, stdout, stderr
        theirs, ours = [ends[0][0], ends[1][1], ends[2][1]], [ends[0][1], ends[1][0], ends[2][0]]
        try:
            with self._lock:
                channel = self._started()
                request = json.dumps({"client": client, "cwd": os.getcwd(), "env": dict(os.environ)}).encode()
                socket.send_fds(channel, [request], theirs)
                with self._exits:
                    if not self._exits.wait_for(lambda: self._pids or self._gone, FORK_TIMEOUT_S):
                        raise KafkabenchError(f"the Python workers' fork server forked nothing in {FORK_TIMEOUT_S:g} s")
                    if not self._pids:
                        raise KafkabenchError(f"the Python workers' fork server is gone ({self._gone})")
                    pid = self._pids.pop(0)
        except BaseException:
            for fd in ours:
                os.close(fd)
            raise
        finally:
            for fd in theirs:
                os.close(fd)
        return ForkedProcess(pid, *ours, server=self)

    def exit_code(self, pid: int, timeout: float | None) -> int | None:
        """The worker's exit code once it has ended within `timeout`, else None; a server that died took its workers
        with it (their parent-death signal, SIGKILL)."""
        with self._exits:
            self._exits.wait_for(lambda: pid in self._codes or self._gone, timeout)
            return self._codes.get(pid, -signal.SIGKILL if self._gone else None)

    def _started(self) -> socket.socket:
        if self._gone is not None:
            raise KafkabenchError(f"the Python workers' fork server is gone ({self._gone})")
        if self._channel is None:
            ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
            self._server = popen([*SERVER, str(theirs.fileno())], pass_fds=[theirs.fileno()], stdin=subprocess.DEVNULL,
                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
            theirs.close()
            self._channel = ours
            threading.Thread(target=self._listen, name="worker-forks", daemon=True).start()
            atexit.register(self.close)
        return self._channel

    def close(self) -> None:
        """The server told to end, and waited for: its CPU and its workers' then count as this process's children's
        (`time`, RUSAGE_CHILDREN), as exec'd workers' do."""
        if self._server is None:
            return
        with contextlib.suppress(OSError):
            self._channel.shutdown(socket.SHUT_WR)
        try:
            self._server.wait(timeout=CLOSE_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            self._server.kill()
            self._server.wait(timeout=CLOSE_TIMEOUT_S)

    def _listen(self) -> None:
        while True:
            try:
                data = self._channel.recv(MESSAGE_BYTES)
            except OSError as exc:
                data, why = b"", str(exc)
            else:
                why = "it exited"
            with self._exits:
                if not data:
                    self._gone = why
                else:
                    message = json.loads(data)
                    if "pid" in message:
                        self._pids.append(message["pid"])
                    else:
                        self._codes[message["exited"]] = message["code"]
                self._exits.notify_all()
            if not data:
                return


FORKS = WorkerForks()

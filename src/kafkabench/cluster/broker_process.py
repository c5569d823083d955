"""One node's JVM process: start it, signal it, tell whether it is still ours and alive."""

from __future__ import annotations

import signal
import subprocess
import time
from pathlib import Path

import psutil

from kafkabench.cluster.broker_config import BROKER_LOG
from kafkabench.cluster.state import NodeState
from kafkabench.errors import ClusterError
from kafkabench.processes import popen, running, started
from kafkabench.waiting import wait_until


ZOMBIE_GRACE_S = 2.0


class BrokerProcess:
    """Wraps a NodeState; the pid and start time recorded there identify the process across invocations."""

    def __init__(self, node: NodeState) -> None:
        self.node = node
        self._popen: subprocess.Popen | None = None

    @property
    def log_file(self) -> Path:
        return self.node.directory / BROKER_LOG

    def start(self, *, detach: bool) -> None:
        """Spawn the JVM with its output appended to the node's log. Detached nodes outlive this process."""
        if self.process() is not None:
            raise ClusterError(f"broker {self.node.node_id} is already running (pid {self.node.pid})")
        with self.log_file.open("ab") as log:
            self._popen = popen(
                self.node.command,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # Ctrl-C in the terminal goes to us; we stop the brokers in order
                die_with_parent=not detach,
            )
        self.node.pid = self._popen.pid
        self.node.started = started(self._popen.pid)

    def process(self) -> psutil.Process | None:
        """Our live process, or None if it exited (a zombie child is reaped here)."""
        if self._popen is not None and self._popen.poll() is not None:
            return None
        return running(self.node.pid, self.node.started)

    def state(self) -> str:
        proc = self.process()
        if proc is None:
            return "dead"
        try:
            return "paused" if proc.status() == psutil.STATUS_STOPPED else "running"
        except psutil.NoSuchProcess:
            return "dead"

    def exit_code(self) -> int | None:
        return self._popen.poll() if self._popen is not None else None

    def signal(self, sig: int) -> None:
        proc = self.process()
        if proc is None:
            raise ClusterError(f"broker {self.node.node_id} is not running; start it with `cluster restart --broker {self.node.node_id}`")
        proc.send_signal(sig)

    def stop(self, timeout_s: float) -> None:
        """SIGTERM (after SIGCONT, a paused JVM cannot shut down), then SIGKILL at the deadline."""
        proc = self.process()
        if proc is None:
            return
        try:
            proc.send_signal(signal.SIGCONT)
            proc.terminate()
        except psutil.NoSuchProcess:
            pass
        if not self._gone_within(timeout_s):
            self.kill()
        self._reap()

    def kill(self) -> None:
        proc = self.process()
        if proc is None:
            return
        try:
            proc.kill()
        except psutil.NoSuchProcess:
            pass
        if not self._gone_within(10):
            raise ClusterError(f"broker {self.node.node_id} (pid {self.node.pid}) is still there 10 s after kill -9")
        self._reap()

    def _gone_within(self, timeout_s: float) -> bool:
        """The process exited: reaped if it is our child. One another process started stays a zombie until
        that parent reaps it (init at once; a parent busy elsewhere, such as a test waiting on us, later):
        given ZOMBIE_GRACE_S to disappear, then counted as gone (psutil's wait would wait for that parent)."""
        deadline = time.monotonic() + timeout_s
        exited_at = None
        while True:
            now = time.monotonic()
            if self.process() is None:
                exited_at = exited_at or now
                if self.node.pid is None or not psutil.pid_exists(self.node.pid) or now - exited_at >= ZOMBIE_GRACE_S:
                    return True
            elif now >= deadline:
                return False
            time.sleep(0.05)

    def wait_paused(self, timeout_s: float = 10) -> None:
        wait_until(lambda: self.state() == "paused", timeout_s=timeout_s, what=f"broker {self.node.node_id} to stop")

    def _reap(self) -> None:
        if self._popen is not None:
            try:
                self._popen.wait(timeout=5)
            except subprocess.TimeoutExpired:
                pass

    def log_tail(self, lines: int = 200) -> list[str]:
        try:
            with self.log_file.open("rb") as f:
                f.seek(0, 2)
                f.seek(max(0, f.tell() - 64 * 1024))
                return f.read().decode("utf-8", "replace").splitlines()[-lines:]
        except FileNotFoundError:
            return []

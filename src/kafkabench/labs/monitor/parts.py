"""The monitor's parts, each in a process of its own, so that none shares another's fate: the prober, the lag
collector and the broker watch run client libraries that can abort the process they run in (librdkafka issue 4605
did, under a paused broker); the serving process (this one) keeps the metrics endpoint, the screen and the result,
and runs no Kafka client at all.

A part that ends (an exception, a C-level abort, a signal) or hangs (not even its beat for STALL_S) is started again and
counted in `kafkabench_monitor_part_restarts_total{part}`, with a note saying why (its exit, the last line it wrote
to stderr). One that keeps dying within its first seconds waits longer each time, up to MAX_BACKOFF_S.
"""

from __future__ import annotations

import json
import queue
import signal
import subprocess
import sys
import threading
import time
from collections import deque
from dataclasses import dataclass, field

from kafkabench.connection import Connection
from kafkabench.labs.monitor.metrics import MonitorMetrics
from kafkabench.labs.monitor.part_main import RUNS
from kafkabench.labs.monitor.scenario import MonitorScenario
from kafkabench.processes import popen

STALL_S = 30.0  # six of a part's beats missed: its process is stuck, not waiting for a broker
QUICK_DEATH_S = 10.0  # a part that ends sooner after its start than this is restarted after a growing backoff
MAX_BACKOFF_S = 30.0
STOP_S = 15.0  # a part told to stop (stdin closed) gets this long to close its clients before it is killed


@dataclass
class Part:
    name: str
    process: subprocess.Popen | None = None
    started_s: float = 0.0
    last_message_s: float = 0.0
    restarts: int = 0
    quick_deaths: int = 0
    restart_at_s: float | None = None  # while it waits to be started again
    stderr_tail: deque = field(default_factory=lambda: deque(maxlen=5))
    stderr_reader: threading.Thread | None = None

    @property
    def state(self) -> str:
        return "restarting" if self.restart_at_s is not None else "running"


class Parts:
    """Starts the parts, hands their messages over (`receive`) with their metrics applied, restarts the ones that
    ended, and stops them all (`stop`)."""

    def __init__(self, connection: Connection, scenario: MonitorScenario, metrics: MonitorMetrics, note,
                 names: tuple[str, ...] = tuple(RUNS)) -> None:
        self._settings = json.dumps({"bootstrap_servers": connection.bootstrap_servers,
                                     "security": [list(pair) for pair in connection.security],
                                     "scenario": scenario.model_dump(mode="json", exclude_none=True)})
        self._metrics, self._note = metrics, note
        self._inbox: queue.Queue = queue.Queue()
        self.parts = {name: Part(name) for name in names}
        for name in names:
            metrics.know_part(name)

    def start(self) -> None:
        for part in self.parts.values():
            self._start(part)

    def pids(self) -> dict[str, int]:
        return {name: part.process.pid for name, part in self.parts.items()
                if part.process is not None and part.process.poll() is None}

    def states(self) -> dict[str, dict]:
        return {name: {"state": part.state, "restarts": part.restarts} for name, part in self.parts.items()}

    def receive(self, until_s: float) -> list[tuple[str, dict]]:
        """The messages that arrive until `until_s` (monotonic), their metrics applied; parts that ended meanwhile
        are restarted, or their restart is scheduled."""
        received = []
        while (left := until_s - time.monotonic()) > 0:
            try:
                name, message = self._inbox.get(timeout=min(left, 0.1))
            except queue.Empty:
                continue
            self._metrics.apply(message.pop("metrics", []))
            received.append((name, message))
        self._look_after()
        return received

    def stop(self) -> None:
        for part in self.parts.values():
            if part.process is not None and part.process.poll() is None:
                _close_stdin(part.process)
        for part in self.parts.values():
            if part.process is None:
                continue
            try:
                part.process.wait(STOP_S)
            except subprocess.TimeoutExpired:
                part.process.kill()
                part.process.wait(STOP_S)

    def _start(self, part: Part) -> None:
        part.process = popen([sys.executable, "-m", "kafkabench.labs.monitor.part_main", part.name],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, bufsize=1)
        part.process.stdin.write(self._settings + "\n")
        part.process.stdin.flush()
        part.started_s = part.last_message_s = time.monotonic()
        part.restart_at_s = None
        process = part.process
        threading.Thread(target=self._read_messages, args=(part, process), daemon=True,
                         name=f"monitor-{part.name}-messages").start()
        part.stderr_reader = threading.Thread(target=self._read_stderr, args=(part, process), daemon=True,
                                              name=f"monitor-{part.name}-stderr")
        part.stderr_reader.start()

    def _read_messages(self, part: Part, process: subprocess.Popen) -> None:
        for line in process.stdout:
            try:
                message = json.loads(line)
            except ValueError:
                continue  # not a message (the stream is the part's own: this does not happen)
            part.last_message_s = time.monotonic()
            if message.get("kind") != "beat":
                self._inbox.put((part.name, message))

    @staticmethod
    def _read_stderr(part: Part, process: subprocess.Popen) -> None:
        for line in process.stderr:
            if line.strip():
                part.stderr_tail.append(line.strip())

    def _look_after(self) -> None:
        now = time.monotonic()
        for part in self.parts.values():
            if part.restart_at_s is not None:
                if now >= part.restart_at_s:
                    self._start(part)
                continue
            why = self._ended(part, now)
            if why is None:
                continue
            part.restarts += 1
            self._metrics.part_restarts.labels(part.name).inc()
            part.quick_deaths = part.quick_deaths + 1 if now - part.started_s < QUICK_DEATH_S else 0
            backoff = min(MAX_BACKOFF_S, 2.0 ** (part.quick_deaths - 1)) if part.quick_deaths else 0.0
            part.restart_at_s = now + backoff
            last = f": {part.stderr_tail[-1]}" if part.stderr_tail else ""
            self._note(f"monitor part {part.name} {why}{last}; restarting it"
                       + (f" in {backoff:.0f} s" if backoff else "") + f" (restart {part.restarts})")

    @staticmethod
    def _ended(part: Part, now: float) -> str | None:
        code = part.process.poll()
        if code is None and now - part.last_message_s > STALL_S:
            part.process.kill()
            part.process.wait(STOP_S)
            return f"sent nothing for {now - part.last_message_s:.0f} s and was killed"
        if code is None:
            return None
        part.stderr_reader.join(1.0)  # its last words (an assertion, a traceback's end) are the note's reason
        if code >= 0:
            return f"exited with status {code}"
        try:
            return f"was ended by {signal.Signals(-code).name}"
        except ValueError:
            return f"was ended by signal {-code}"


def _close_stdin(process: subprocess.Popen) -> None:
    try:
        process.stdin.close()
    except OSError:
        pass

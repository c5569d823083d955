"""A Ray cluster on this machine for trying `--launcher ray`: a head with no CPUs (it takes no workers) and N nodes,
each offering the `kafkabench` resource, listening on loopback only and taking only drivers that hold its token
(on_ray.local_access says how). Every process is a `ray start --block` kafkabench started, in a process group of
its own, and is stopped by its pid (SIGTERM stops the node's own processes with it).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import psutil

from kafkabench.cluster.ports import free_ports
from kafkabench.errors import ClusterError
from kafkabench.on_ray.launcher import RESOURCE
from kafkabench.on_ray.local_access import (STATE_FILE, KnownCluster, cluster_auth_env, default_ray_dir, started_here,
                                            write_token)
from kafkabench.processes import running, started, started_from
from kafkabench.waiting import wait_until

OBJECT_STORE_BYTES = 100 * 2**20  # workers pass files and lines, not data sets


def session_dir(directory: Path) -> Path:
    """Ray's own `--temp-dir`, short whatever `directory` is: Ray puts its unix sockets there, whose paths may not
    exceed 107 bytes (a pytest or home directory a few levels deep already does)."""
    key = hashlib.sha1(str(directory.resolve()).encode()).hexdigest()[:10]
    return Path(tempfile.gettempdir()) / f"kafkabench-ray-{key}"


@dataclass
class RayProcess:
    role: str  # head | node N
    pid: int
    started: float  # seconds from boot to its start (processes.started): a recycled pid is never taken for ours
    log: str

    @classmethod
    def of(cls, saved: dict) -> RayProcess:
        """As the state file keeps it (an older kafkabench gave its start as psutil's create_time)."""
        start = saved["started"] if "started" in saved else started_from(saved["create_time"])
        return cls(saved["role"], saved["pid"], start, saved["log"])

    def alive(self) -> bool:
        return running(self.pid, self.started) is not None


@dataclass(frozen=True)
class OpenPort:
    host: str
    port: int
    process: str  # its name: gcs_server, raylet, ...


@dataclass
class LocalRayCluster:
    """`with LocalRayCluster(nodes=3) as cluster:` (stopped on the way out), or `start()` / `attach(dir).stop()`.
    Token authentication is on, with a token of its own in `token_file`, unless `insecure` or RAY_AUTH_MODE is set."""

    nodes: int = 3
    cpus_per_node: int = 1
    directory: Path = field(default_factory=default_ray_dir)
    address: str = ""
    processes: list[RayProcess] = field(default_factory=list)
    insecure: bool = False
    token_file: str = ""

    def __enter__(self) -> LocalRayCluster:
        self.start()
        return self

    def __exit__(self, *exc_info) -> None:
        self.stop()

    @classmethod
    def attach(cls, directory: Path | None = None) -> LocalRayCluster:
        directory = directory or default_ray_dir()
        try:
            state = json.loads((directory / STATE_FILE).read_text())
        except FileNotFoundError:
            raise ClusterError(f"no Ray cluster started by kafkabench in {directory}; `kafkabench ray up` starts one") from None
        return cls(state["nodes"], state["cpus_per_node"], directory, state["address"],
                   [RayProcess.of(p) for p in state["processes"]], token_file=state.get("token_file") or "")

    def start(self, timeout_s: float = 120) -> None:
        self.directory.mkdir(parents=True, exist_ok=True)
        if (self.directory / STATE_FILE).exists() and any(p.alive() for p in LocalRayCluster.attach(self.directory).processes):
            raise ClusterError(f"a Ray cluster kafkabench started is running in {self.directory}; "
                               "`kafkabench ray down` stops it")
        port = free_ports(1)[0]
        self.address = f"127.0.0.1:{port}"
        if not self.insecure and "RAY_AUTH_MODE" not in os.environ:
            self.token_file = str(write_token(self.directory))
        started_here(KnownCluster(self.address, self.directory, self.token_file, loopback=True))
        try:
            self._spawn("head", ["--head", "--port", str(port), "--num-cpus", "0", "--include-dashboard", "false",
                                 "--temp-dir", str(session_dir(self.directory))])
            wait_until(lambda: self._alive(0) and self._started(0), timeout_s=timeout_s,
                       what=f"the Ray head at {self.address}", interval_s=0.2)
            # the head, then the nodes one at a time (several starting at once time out on the head: "Failed to get
            # node info ... Deadline Exceeded"), each waited for by its own log, free to read, where a `ray status`
            # in a loop took a core and slowed the nodes' start by half; `ray start` says it started once the GCS has
            # the node (and its resources) registered
            for count in range(1, self.nodes + 1):
                self._spawn(f"node {count}", ["--address", self.address, "--num-cpus", str(self.cpus_per_node),
                                              "--resources", json.dumps({RESOURCE: 1})])
                wait_until(lambda: self._alive(-1) and self._started(-1), timeout_s=timeout_s,
                           what=f"Ray node {count} to start", interval_s=0.2)
            for index in range(len(self.processes)):
                self._alive(index)
        except BaseException:
            self.stop()
            raise

    def stop(self, timeout_s: float = 30) -> None:
        """Nodes first, the head last; each by its pid, its process group killed if it outlives the timeout; then its
        state, token and Ray's session directory removed."""
        for process in reversed(self.processes):
            if process.alive():
                with contextlib.suppress(ProcessLookupError):
                    os.kill(process.pid, signal.SIGTERM)
        deadline = time.monotonic() + timeout_s
        for process in reversed(self.processes):
            while process.alive() and time.monotonic() < deadline:
                time.sleep(0.1)
            if process.alive():
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(process.pid, signal.SIGKILL)
        for path in (self.directory / STATE_FILE, *([Path(self.token_file)] if self.token_file else [])):
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
        shutil.rmtree(session_dir(self.directory), ignore_errors=True)
        started_here(None, self.address)

    def open_ports(self) -> list[OpenPort]:
        """Where the cluster's processes (each `ray start` and every process under it) listen (TCP) or take datagrams
        (UDP), read from each process's own socket table."""
        found = set()
        for process in self._process_tree():
            with contextlib.suppress(psutil.Error):
                for conn in process.net_connections(kind="inet"):
                    if conn.laddr and (conn.status == psutil.CONN_LISTEN or
                                       (conn.status == psutil.CONN_NONE and not conn.raddr)):
                        found.add(OpenPort(conn.laddr.ip, conn.laddr.port, process.name()))
        return sorted(found, key=lambda p: (p.process, p.port))

    def _process_tree(self) -> list[psutil.Process]:
        tree = []
        for process in self.processes:
            if process.alive():
                with contextlib.suppress(psutil.Error):
                    top = psutil.Process(process.pid)
                    tree += [top, *top.children(recursive=True)]
        return tree

    def kill_node(self, index: int) -> None:
        """Node `index` (1..N) gone at once, as when its machine fails: its `ray start` and the processes it started
        (the raylet and its workers, in its process group) killed, without Ray's drain."""
        process = next(p for p in self.processes if p.role == f"node {index}")
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)

    def _spawn(self, role: str, arguments: list[str]) -> None:
        log = self.directory / f"{role.replace(' ', '-')}.log"
        # no log monitor: it relays workers' output to drivers, which kafkabench's does not take (log_to_driver=False),
        # and its process per node took a third of the cluster's start here (18 s -> 13 s for 3 nodes); Ray's CLI run
        # so that it keeps 127.0.0.1 (local_access), for every process to listen on loopback only
        command = [sys.executable, "-m", "kafkabench.on_ray.local_access", "start", "--block", "--disable-usage-stats",
                   "--node-ip-address", "127.0.0.1", "--object-store-memory", str(OBJECT_STORE_BYTES),
                   "--include-log-monitor", "false", *arguments]
        with open(log, "w") as output:
            popen = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=output, stderr=subprocess.STDOUT,
                                     start_new_session=True, env=_env(self.token_file, self.insecure))
        self.processes.append(RayProcess(role, popen.pid, started(popen.pid), str(log)))
        self._save()

    def _alive(self, index: int) -> bool:
        process = self.processes[index]
        if not process.alive():
            raise ClusterError(f"Ray {process.role} exited while starting{_last_error(process.log)}; its log: {process.log}")
        return True

    def _started(self, index: int) -> bool:
        with contextlib.suppress(OSError):
            return "Ray runtime started." in Path(self.processes[index].log).read_text(errors="replace")
        return False

    def _save(self) -> None:
        # what a driver reads (local_access.known_cluster): the address, the token's file, that it keeps to loopback
        state = {"address": self.address, "nodes": self.nodes, "cpus_per_node": self.cpus_per_node,
                 "token_file": self.token_file, "loopback": True, "processes": [asdict(p) for p in self.processes]}
        (self.directory / STATE_FILE).write_text(json.dumps(state, indent=1))


def _last_error(log: str) -> str:
    """`: ` and the log's last line naming an error, or nothing."""
    with contextlib.suppress(OSError):
        lines = [line.strip() for line in Path(log).read_text(errors="replace").splitlines()]
        errors = [line for line in lines if "Error" in line or "error" in line]
        if errors:
            return f": {errors[-1]}"
    return ""


def _env(token_file: str = "", insecure: bool = False) -> dict[str, str]:
    """Usage stats off; no idle Python workers started ahead (Ray's raylet starts them, one per CPU, at its start and
    when a driver connects, for tasks kafkabench never sends, on the cores its workers run on); token authentication
    with the cluster's own token, the same for head and nodes (local_access.cluster_auth_env)."""
    return {**cluster_auth_env(os.environ, token_file, insecure), "RAY_USAGE_STATS_ENABLED": "0",
            "RAY_enable_worker_prestart": "0", "RAY_prestart_worker_first_driver": "0"}

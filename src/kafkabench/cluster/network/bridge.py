"""The isolated network itself: a Linux bridge in the root namespace holding the subnet's first address (clients
reach the brokers through it), and per node a network namespace joined to the bridge by a veth, holding the
node's address and no default route (a node reaches the bridge's subnet and nothing else). Made and removed with
`ip`. Before anything is made, a record of it (and of the process that made it) is written under RECORDS; the
processes that run in it (the brokers of a cluster that outlives its maker) are added to it as owners. A network
whose owners are all gone (kafkabench killed mid-fault, the brokers too) is removed by `remove_stale()`, which
every creation calls first. /run is a tmpfs, emptied at boot like the namespaces themselves.

Names are short (Linux caps interface names at 15 characters): `kb` and six hex digits for the bridge, its
namespaces `kb......-N`, the root ends of the veths `kb......vN`.
"""

from __future__ import annotations

import contextlib
import ipaddress
import json
import os
import secrets
import shlex
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import psutil

from kafkabench.cluster.network.routes import check_routes_into, ip, ip_json
from kafkabench.cluster.network.subnets import check_subnet, free_subnet, taken_networks
from kafkabench.errors import ClusterError
from kafkabench.processes import running, started

FIRST_NODE_HOST = 11  # node N is .(10 + N)
RECORDS = Path("/run/kafkabench/networks")
STARTS = "seconds from boot"  # how a record gives its processes' starts (processes.started)


@dataclass
class IsolatedNetwork:
    """`with IsolatedNetwork.create(nodes=3) as network:` (removed on the way out), or `create()` / `remove()`."""

    name: str  # the bridge's name, and the stem of everything else's
    subnet: ipaddress.IPv4Network
    nodes: int

    @classmethod
    def of(cls, record: dict) -> IsolatedNetwork:
        """The network `describe()` gave, e.g. as a cluster's state file keeps it."""
        return cls(record["name"], ipaddress.IPv4Network(record["subnet"]), record["nodes"])

    def describe(self) -> dict:
        return {"name": self.name, "subnet": str(self.subnet), "nodes": self.nodes}

    @classmethod
    def create(cls, nodes: int, subnet: ipaddress.IPv4Network | None = None) -> IsolatedNetwork:
        if missing := missing_capabilities(Path("/proc/self/status").read_text()):
            raise ClusterError(f"an isolated network needs root (it lacks {' and '.join(missing)} here): run it with "
                               "sudo, or leave out --network isolated and network faults")
        remove_stale()
        taken = taken_networks(ip_json("route"), ip_json("addr"))
        if subnet is not None:
            check_subnet(subnet, taken)
            if subnet.num_addresses < FIRST_NODE_HOST + nodes:
                raise ClusterError(f"subnet {subnet} is too small for {nodes} nodes (they take .{FIRST_NODE_HOST} "
                                   f"to .{FIRST_NODE_HOST + nodes - 1}): give a /24")
        subnet = subnet or free_subnet(taken)
        network = cls(f"kb{secrets.token_hex(3)}", subnet, nodes)
        network._record()
        try:
            network._make()
            check_routes_into([network.address(n) for n in range(1, nodes + 1)], network.name)
        except BaseException:
            network.remove()
            raise
        return network

    def __enter__(self) -> IsolatedNetwork:
        return self

    def __exit__(self, *exc_info) -> None:
        self.remove()

    # ---- addresses and names ------------------------------------------------------------------------------

    @property
    def gateway(self) -> str:
        """The bridge's address: where the root namespace (clients) meets the nodes."""
        return str(self.subnet.network_address + 1)

    def address(self, node: int) -> str:
        if not 1 <= node <= self.nodes:
            raise ClusterError(f"node {node} is not one of this network's 1..{self.nodes}")
        return str(self.subnet.network_address + FIRST_NODE_HOST - 1 + node)

    def namespace(self, node: int) -> str:
        return f"{self.name}-{node}"

    def exec_prefix(self, node: int) -> list[str]:
        """What runs a command inside node `node`'s namespace."""
        return ["ip", "netns", "exec", self.namespace(node)]

    @property
    def record(self) -> Path:
        """Where its record is kept: there from before anything is made until everything is removed."""
        return RECORDS / f"{self.name}.json"

    def veth(self, node: int) -> str:
        """The root namespace's end of node `node`'s veth (the node's own end is its `eth0`)."""
        return f"{self.name}v{node}"

    # ---- making and removing ------------------------------------------------------------------------------

    def _make(self) -> None:
        prefix = self.subnet.prefixlen
        ip("link", "add", self.name, "type", "bridge")
        ip("addr", "add", f"{self.gateway}/{prefix}", "dev", self.name)
        ip("link", "set", self.name, "up")
        for node in range(1, self.nodes + 1):
            namespace, veth = self.namespace(node), self.veth(node)
            ip("netns", "add", namespace)
            ip("link", "add", veth, "type", "veth", "peer", "name", "eth0", "netns", namespace)
            ip("link", "set", veth, "master", self.name, "up")
            ip("addr", "add", f"{self.address(node)}/{prefix}", "dev", "eth0", namespace=namespace)
            ip("link", "set", "eth0", "up", namespace=namespace)
            ip("link", "set", "lo", "up", namespace=namespace)

    def remove(self) -> None:
        """Its helpers, its rules in the root namespace, every veth (both ends at once: left to the namespace's
        removal, the root end lingers a moment), every namespace and the bridge; what is already gone is skipped."""
        stop_helpers(self.helpers())
        remove_root_rules(self.name)
        for node in range(1, self.nodes + 1):
            _quietly("link", "del", self.veth(node))
            _quietly("netns", "del", self.namespace(node))
        _quietly("link", "del", self.name)
        with contextlib.suppress(FileNotFoundError):
            self.record.unlink()

    def _record(self) -> None:
        """Who made this network, written before any of it exists."""
        RECORDS.mkdir(parents=True, exist_ok=True)
        self._write_record({**self.describe(), "starts": STARTS, "owners": [[os.getpid(), started(os.getpid())]]})

    def add_owner(self, pid: int, start: float) -> None:
        """The network stays while this process (started at `start`: processes.started) runs, even after its maker
        is gone."""
        self._add("owners", pid, start)

    def add_helper(self, pid: int, start: float) -> None:
        """A process serving the network (a delay helper): ended when the network is removed, whoever removes it."""
        self._add("helpers", pid, start)

    def helpers(self) -> list[psutil.Process]:
        """The recorded helpers still running."""
        record = _read(self.record) or {}
        return [process for pid, start in record.get("helpers", []) if (process := running(pid, start))]

    def _add(self, kind: str, pid: int, start: float) -> None:
        record = _read(self.record) or {**self.describe(), "starts": STARTS, "owners": []}
        record.setdefault(kind, []).append([pid, start])
        self._write_record(record)

    def _write_record(self, record: dict) -> None:
        path = self.record
        temporary = path.with_suffix(f".{os.getpid()}.tmp")
        temporary.write_text(json.dumps(record))
        os.replace(temporary, path)


def _read(path: Path) -> dict | None:
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


CAPABILITIES = {"CAP_NET_ADMIN": 12, "CAP_SYS_ADMIN": 21}  # links, rules, qdiscs; `ip netns add`'s mounts


def missing_capabilities(status: str) -> list[str]:
    """The capabilities an isolated network needs that this process lacks, from /proc/self/status's CapEff."""
    effective = next((int(line.split()[1], 16) for line in status.splitlines() if line.startswith("CapEff:")), 0)
    return [name for name, bit in CAPABILITIES.items() if not effective >> bit & 1]


def stop_helpers(helpers: list[psutil.Process], timeout_s: float = 5) -> None:
    """SIGTERM (a delay helper lets its held packets go), then SIGKILL at the deadline."""
    for helper in helpers:
        with contextlib.suppress(psutil.NoSuchProcess):
            helper.terminate()
    _, alive = psutil.wait_procs(helpers, timeout=timeout_s)
    for helper in alive:
        with contextlib.suppress(psutil.NoSuchProcess):
            helper.kill()
    psutil.wait_procs(alive, timeout=timeout_s)


def root_rule_comment(name: str) -> str:
    """What marks the rules a network put into the root namespace's iptables (its delay towards the clients)."""
    return f"kafkabench-{name}"


def remove_root_rules(name: str) -> None:
    """Every root-namespace iptables INPUT rule of network `name` (none unless a delay reached the clients)."""
    if shutil.which("iptables") is None:
        return
    listed = subprocess.run(["iptables", "-w", "5", "-S", "INPUT"], capture_output=True, text=True, timeout=30)
    for line in listed.stdout.splitlines():
        if f'--comment {root_rule_comment(name)}' in line and line.startswith("-A INPUT"):
            subprocess.run(["iptables", "-w", "5", "-D", *shlex.split(line)[1:]], capture_output=True, timeout=30)


def remove_stale() -> list[str]:
    """Remove every recorded network none of whose owners is running; the names removed."""
    removed = []
    for path in sorted(RECORDS.glob("*.json")) if RECORDS.is_dir() else []:
        record = _read(path)
        if record is None or _owned(record):
            continue
        IsolatedNetwork.of(record).remove()
        removed.append(record["name"])
    return removed


def _owned(record: dict) -> bool:
    """Whether a process that owns the network runs. A record an older kafkabench wrote gives its owners' starts as
    psutil's create_time, which a clock step moves: any process under an owner's pid keeps that network."""
    if record.get("starts") == STARTS:
        return any(running(pid, start) for pid, start in record["owners"])
    return any(psutil.pid_exists(pid) for pid, _ in record["owners"])


def _quietly(*arguments: str) -> None:
    """An `ip` removal whose target may already be gone."""
    try:
        ip(*arguments)
    except ClusterError as exc:
        if "Cannot find" not in str(exc) and "No such file" not in str(exc) and "does not exist" not in str(exc):
            raise

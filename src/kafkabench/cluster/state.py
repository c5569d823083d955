"""The state file of a running embedded cluster, so separate invocations can find and control it."""

from __future__ import annotations

import os
from pathlib import Path

from pydantic import BaseModel, ValidationError, model_validator

from kafkabench.cluster.listeners import Security
from kafkabench.errors import ClusterError
from kafkabench.processes import started_from

STATE_FILE = "cluster.json"


class NodeState(BaseModel):
    node_id: int
    port: int | None  # clients' port; None on a controller-only node
    controller_port: int | None  # the KRaft quorum's port; None on a broker-only node
    directory: Path
    roles: str = "broker,controller"
    listener_ports: dict[str, int] = {}  # client listener -> port; `port` is the first listener's
    host: str = "127.0.0.1"  # its address: loopback, or its own on an isolated network
    namespace: str | None = None  # the network namespace it runs in, on an isolated network
    metrics_port: int | None = None  # its JMX exporter's /metrics (Prometheus format), on `host`
    command: list[str]
    pid: int | None = None
    started: float | None = None  # seconds from boot to its start (processes.started): a recycled pid is another's
    kafka_version: str | None = None  # the release it runs, where a rolling upgrade moved it off the cluster's

    @model_validator(mode="before")
    @classmethod
    def _from_an_older_kafkabench(cls, data):
        """A cluster an older kafkabench started gave its nodes' starts as psutil's create_time."""
        if isinstance(data, dict) and "create_time" in data and "started" not in data:
            create_time = data.pop("create_time")
            data["started"] = None if create_time is None else started_from(create_time)
        return data

    @property
    def address(self) -> str:
        """host:port of its first client listener."""
        return f"{self.host}:{self.port}"


class ClusterState(BaseModel):
    schema_: str = "kafkabench.cluster/1"
    kafka_version: str
    cluster_id: str
    directory: Path
    nodes: list[NodeState]
    security: Security = Security()
    network: dict | None = None  # an isolated network's description (`IsolatedNetwork.describe`); None: loopback
    broker_settings: dict[str, str] = {}  # the user's, beside kafkabench's own wiring
    jvm_options: list[str] = []  # the user's, after kafkabench's own
    startup: dict[str, float] = {}  # seconds from the start to the end of each of its phases, in order

    @property
    def brokers(self) -> list[NodeState]:
        return [node for node in self.nodes if node.port is not None]

    @property
    def controllers(self) -> list[NodeState]:
        return [node for node in self.nodes if node.controller_port is not None]

    @property
    def layout(self) -> str:
        """e.g. "3 brokers + 1 controller" or "3 combined broker+controller nodes"."""
        dedicated = [node for node in self.nodes if node.port is None]
        if not dedicated:
            return f"{len(self.nodes)} combined broker+controller node{'s' * (len(self.nodes) > 1)}"
        brokers = len(self.brokers)
        return f"{brokers} broker{'s' * (brokers > 1)} + {len(dedicated)} controller{'s' * (len(dedicated) > 1)}"

    @property
    def bootstrap_servers(self) -> str:
        return ",".join(node.address for node in self.brokers)

    def listener_bootstrap(self, mode: str) -> str:
        """The bootstrap servers of client listener `mode` (see `cluster.listeners`)."""
        if mode not in self.security.listeners:
            raise ClusterError(f"this cluster has no {mode} listener; its listeners are {', '.join(self.security.listeners)}")
        return ",".join(f"{node.host}:{node.listener_ports.get(mode, node.port)}" for node in self.brokers)

    def node(self, node_id: int) -> NodeState:
        for node in self.nodes:
            if node.node_id == node_id:
                return node
        known = ", ".join(str(n.node_id) for n in self.nodes)
        raise ClusterError(f"no node {node_id} in this cluster; its nodes are {known}")


def state_path(directory: Path) -> Path:
    return directory / STATE_FILE


def save_state(state: ClusterState) -> None:
    path = state_path(state.directory)
    tmp = path.with_suffix(f".{os.getpid()}.tmp")
    tmp.write_text(state.model_dump_json(indent=1))
    os.replace(tmp, path)


def load_state(directory: Path) -> ClusterState | None:
    path = state_path(directory)
    try:
        return ClusterState.model_validate_json(path.read_text())
    except FileNotFoundError:
        return None
    except ValidationError as exc:
        raise ClusterError(f"{path} is not a kafkabench cluster state file ({exc.error_count()} errors); remove it") from exc


def clear_state(directory: Path) -> None:
    state_path(directory).unlink(missing_ok=True)

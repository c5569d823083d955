"""The state file of a running embedded cluster, so separate invocations can find and control it."""

from __future__ import annotations

import os
from pathlib import Path

from pydantic import BaseModel, ValidationError

from kafkabench.errors import ClusterError

STATE_FILE = "cluster.json"


class NodeState(BaseModel):
    node_id: int
    port: int
    controller_port: int
    directory: Path
    command: list[str]
    pid: int | None = None
    create_time: float | None = None  # psutil's start time, so a recycled pid is never mistaken for ours


class ClusterState(BaseModel):
    schema_: str = "kafkabench.cluster/1"
    kafka_version: str
    cluster_id: str
    directory: Path
    nodes: list[NodeState]

    @property
    def bootstrap_servers(self) -> str:
        return ",".join(f"127.0.0.1:{node.port}" for node in self.nodes)

    def node(self, node_id: int) -> NodeState:
        for node in self.nodes:
            if node.node_id == node_id:
                return node
        known = ", ".join(str(n.node_id) for n in self.nodes)
        raise ClusterError(f"no broker {node_id} in this cluster; brokers are {known}")


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

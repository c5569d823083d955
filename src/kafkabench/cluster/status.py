"""`cluster status --json`: the shape other tools read (see docs/design.md)."""

from __future__ import annotations

from pydantic import BaseModel


class BrokerStatus(BaseModel):
    """One node: a broker (with `port` for clients) or a dedicated controller (`port` None)."""

    id: int
    pid: int | None
    port: int | None
    controller_port: int | None = None
    roles: str = "broker,controller"
    alive: bool
    state: str  # running | paused | dead
    log: str


class ClusterStatus(BaseModel):
    bootstrap_servers: str
    kafka_version: str
    cluster_id: str
    directory: str
    layout: str = ""  # e.g. "3 brokers + 1 controller"
    brokers: list[BrokerStatus]
    controllers: list[BrokerStatus] = []  # the dedicated ones; combined nodes are listed as brokers

"""`cluster status --json`: the shape other tools read (see docs/design.md)."""

from __future__ import annotations

from pydantic import BaseModel


class BrokerStatus(BaseModel):
    id: int
    pid: int | None
    port: int
    alive: bool
    state: str  # running | paused | dead
    log: str


class ClusterStatus(BaseModel):
    bootstrap_servers: str
    kafka_version: str
    cluster_id: str
    directory: str
    brokers: list[BrokerStatus]

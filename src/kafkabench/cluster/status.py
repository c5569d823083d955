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


class ListenerStatus(BaseModel):
    name: str  # plaintext, ssl, mtls, sasl_plaintext, sasl_ssl
    protocol: str  # Kafka's security.protocol for it
    bootstrap_servers: str
    client_properties: str | None = None  # how to connect, in Java names (owner-only: it may hold a password)


class SecurityStatus(BaseModel):
    """How to connect: the first listener is what `bootstrap_servers` names and brokers use among themselves."""

    listener: str
    protocol: str
    sasl_mechanism: str | None = None
    client_properties: str | None = None
    listeners: list[ListenerStatus]


class ClusterStatus(BaseModel):
    bootstrap_servers: str
    kafka_version: str
    cluster_id: str
    directory: str
    layout: str = ""  # e.g. "3 brokers + 1 controller"
    brokers: list[BrokerStatus]
    controllers: list[BrokerStatus] = []  # the dedicated ones; combined nodes are listed as brokers
    security: SecurityStatus | None = None

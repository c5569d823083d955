"""`cluster status --json`: the shape other tools read (see docs/design.md)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic import BaseModel

from kafkabench.cluster.listeners import PROTOCOLS

if TYPE_CHECKING:
    from kafkabench.cluster.state import ClusterState


class BrokerStatus(BaseModel):
    """One node: a broker (with `port` for clients) or a dedicated controller (`port` None)."""

    id: int
    pid: int | None
    port: int | None
    host: str = "127.0.0.1"  # its address: loopback, or its own on an isolated network
    controller_port: int | None = None
    roles: str = "broker,controller"
    metrics: str | None = None  # host:port of its Prometheus metrics (JMX exporter), http://HOST:PORT/metrics
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
    network: dict | None = None  # an isolated network: its bridge, subnet and node count; None: loopback
    broker_settings: dict[str, str] = {}  # the user's (`cluster up -c`), beside kafkabench's own wiring
    jvm_options: list[str] = []  # the user's (`cluster up --jvm-option`), after kafkabench's own


def security_status(state: ClusterState) -> SecurityStatus:
    """How to connect to each listener of the cluster in `state`; client.properties only where there are secrets."""
    security = state.security
    properties = (lambda mode: str(security.client_properties(mode))) if security.secrets_dir else (lambda mode: None)
    return SecurityStatus(
        listener=security.primary, protocol=PROTOCOLS[security.primary],
        sasl_mechanism=security.mechanism if security.primary.startswith("sasl_") else None,
        client_properties=properties(security.primary),
        listeners=[ListenerStatus(name=mode, protocol=PROTOCOLS[mode], client_properties=properties(mode),
                                  bootstrap_servers=state.listener_bootstrap(mode)) for mode in security.listeners])

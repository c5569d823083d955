"""What each embedded node is told: server.properties for a KRaft node (combined broker+controller, broker
only or controller only), and its log4j2 setup."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from kafkabench.cluster import listeners as client_listeners
from kafkabench.cluster.listeners import Security
from kafkabench.errors import ConfigError


HOST = "127.0.0.1"
REPLICATION = "REPLICATION"
BROKER_LOG = "broker.log"


COMBINED, BROKER, CONTROLLER = "broker,controller", "broker", "controller"


@dataclass(frozen=True)
class NodeLayout:
    """Where one node lives: its id, its roles, its address and ports (`port` for clients unless it is a controller
    only, `controller_port` for the KRaft quorum unless it is a broker only, `replication_port` where brokers fetch
    from each other when that is apart from the clients' listener) and its directory."""

    node_id: int
    port: int | None
    controller_port: int | None
    directory: Path
    roles: str = COMBINED
    listener_ports: dict[str, int] = field(default_factory=dict)  # client listener -> port; `port` is the first's
    host: str = HOST
    replication_port: int | None = None  # None: brokers replicate over the first client listener
    metrics_port: int | None = None  # the JMX exporter's /metrics

    @property
    def is_broker(self) -> bool:
        return self.roles != CONTROLLER

    @property
    def is_controller(self) -> bool:
        return self.roles != BROKER

    @property
    def data_dir(self) -> Path:
        return self.directory / "data"

    @property
    def config_file(self) -> Path:
        return self.directory / "server.properties"

    @property
    def log_file(self) -> Path:
        return self.directory / BROKER_LOG

    @property
    def log4j_file(self) -> Path:
        return self.directory / "log4j2.properties"



LOG4J2 = """\
status = warn
appender.out.type = Console
appender.out.name = OUT
appender.out.layout.type = PatternLayout
appender.out.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = INFO
rootLogger.appenderRef.out.ref = OUT
logger.request.name = kafka.request.logger
logger.request.level = WARN
"""


def cluster_defaults(broker_count: int) -> dict[str, str]:
    """Settings of an embedded cluster that differ from Kafka's defaults, and why."""
    replication = str(min(3, broker_count))
    min_isr = str(min(2, broker_count))
    return {
        # internal topics must fit the cluster: Kafka's default RF 3 cannot be placed on one broker
        "offsets.topic.replication.factor": replication,
        "transaction.state.log.replication.factor": replication,
        "transaction.state.log.min.isr": min_isr,
        "share.coordinator.state.topic.replication.factor": replication,
        "share.coordinator.state.topic.min.isr": min_isr,
        # a benchmark should not wait 3 s for the first consumer group to settle
        "group.initial.rebalance.delay.ms": "0",
        # a typo in a topic name must fail instead of silently creating a new topic
        "auto.create.topics.enable": "false",
    }


def render_server_properties(node: NodeLayout, nodes: list[NodeLayout], overrides: dict[str, str],
                             security: Security | None = None) -> str:
    """The node's settings; `nodes` is the whole cluster: its controllers are the quorum's voters. A broker's client
    listeners and their security come from `security` (plaintext only by default); the quorum's stays plaintext, and
    so does a replication listener of its own (on a private network, see `cluster.network`)."""
    quorum = ",".join(f"{v.node_id}@{v.host}:{v.controller_port}" for v in nodes if v.is_controller)
    security = security or Security()
    controller = {"listeners": f"CONTROLLER://{node.host}:{node.controller_port}",
                  "advertised.listeners": f"CONTROLLER://{node.host}:{node.controller_port}",
                  "listener.security.protocol.map": "CONTROLLER:PLAINTEXT"}
    clients = client_listeners.broker_settings(security, node.listener_ports or {security.primary: node.port},
                                               node.host) if node.is_broker else {}
    if clients and node.replication_port is not None:
        replication = f"{REPLICATION}://{node.host}:{node.replication_port}"
        clients.update({"listeners": f"{clients['listeners']},{replication}",
                        "advertised.listeners": f"{clients['advertised.listeners']},{replication}",
                        "listener.security.protocol.map": f"{clients['listener.security.protocol.map']},"
                                                          f"{REPLICATION}:PLAINTEXT",
                        "inter.broker.listener.name": REPLICATION})
    listening = [part for part, present in ((clients, node.is_broker), (controller, node.is_controller)) if present]
    settings = {
        "process.roles": node.roles,
        "node.id": str(node.node_id),
        "controller.quorum.voters": quorum,
        **clients,
        "listeners": ",".join(part["listeners"] for part in listening),
        "advertised.listeners": clients["advertised.listeners"] if node.is_broker else controller["advertised.listeners"],
        # a broker-only node needs the quorum's listener mapped too: it connects to the controllers through it
        "listener.security.protocol.map": ",".join(
            part["listener.security.protocol.map"] for part in (clients, controller) if part),
        "controller.listener.names": "CONTROLLER",
        "log.dirs": str(node.data_dir),
        **cluster_defaults(sum(n.is_broker for n in nodes)),
        **overrides,
    }
    return "".join(f"{key}={_escape(value)}\n" for key, value in settings.items())


def _escape(value: str) -> str:
    # Java .properties treats backslash as an escape; paths and values must survive literally
    return value.replace("\\", "\\\\").replace("\n", "\\n")


RESERVED = frozenset({"process.roles", "node.id", "controller.quorum.voters", "listeners", "advertised.listeners",
                      "controller.listener.names", "inter.broker.listener.name", "log.dirs"})


def parse_broker_overrides(items: list[str]) -> dict[str, str]:
    """`KEY=VALUE` strings from the command line into a dict; the cluster's own wiring cannot be overridden."""
    overrides = {}
    for item in items:
        key, sep, value = item.partition("=")
        key = key.strip()
        if not sep or not key:
            raise ConfigError(f"--broker-config {item!r}: expected KEY=VALUE, e.g. num.io.threads=8")
        if key in RESERVED:
            raise ConfigError(f"--broker-config {key}: set by kafkabench to wire the embedded cluster; it cannot be overridden")
        overrides[key] = value.strip()
    return overrides

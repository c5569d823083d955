"""What each embedded node is told: server.properties for KRaft combined nodes, and its log4j2 setup."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from kafkabench.errors import ConfigError


HOST = "127.0.0.1"
BROKER_LOG = "broker.log"


@dataclass(frozen=True)
class NodeLayout:
    """Where one node lives: its id, its two loopback ports and its directory."""

    node_id: int
    port: int
    controller_port: int
    directory: Path

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


def cluster_defaults(node_count: int) -> dict[str, str]:
    """Settings of an embedded cluster that differ from Kafka's defaults, and why."""
    replication = str(min(3, node_count))
    min_isr = str(min(2, node_count))
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


def render_server_properties(node: NodeLayout, voters: list[NodeLayout], overrides: dict[str, str]) -> str:
    quorum = ",".join(f"{v.node_id}@{HOST}:{v.controller_port}" for v in voters)
    settings = {
        "process.roles": "broker,controller",
        "node.id": str(node.node_id),
        "controller.quorum.voters": quorum,
        "listeners": f"PLAINTEXT://{HOST}:{node.port},CONTROLLER://{HOST}:{node.controller_port}",
        "advertised.listeners": f"PLAINTEXT://{HOST}:{node.port}",
        "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
        "controller.listener.names": "CONTROLLER",
        "inter.broker.listener.name": "PLAINTEXT",
        "log.dirs": str(node.data_dir),
        **cluster_defaults(len(voters)),
        **overrides,
    }
    return "".join(f"{key}={_escape(value)}\n" for key, value in settings.items())


def _escape(value: str) -> str:
    # Java .properties treats backslash as an escape; paths and values must survive literally
    return value.replace("\\", "\\\\").replace("\n", "\\n")


RESERVED = frozenset({"process.roles", "node.id", "controller.quorum.voters", "listeners", "advertised.listeners",
                      "controller.listener.names", "log.dirs"})


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

from pathlib import Path

import pytest

from kafkabench.cluster.broker_config import BROKER, CONTROLLER, NodeLayout, parse_broker_overrides, render_server_properties
from kafkabench.cluster.listeners import parse_listeners, prepare_secrets
from kafkabench.errors import ConfigError


def layouts(n: int) -> list[NodeLayout]:
    return [NodeLayout(i, 9092 + i, 19092 + i, Path(f"/tmp/c/node-{i}")) for i in range(1, n + 1)]


def parse(text: str) -> dict[str, str]:
    return dict(line.split("=", 1) for line in text.splitlines())


def test_single_node_is_a_combined_kraft_node():
    node = layouts(1)[0]
    props = parse(render_server_properties(node, [node], {}))
    assert props["process.roles"] == "broker,controller"
    assert props["controller.quorum.voters"] == "1@127.0.0.1:19093"
    assert props["listeners"] == "PLAINTEXT://127.0.0.1:9093,CONTROLLER://127.0.0.1:19093"
    assert props["advertised.listeners"] == "PLAINTEXT://127.0.0.1:9093"
    assert props["log.dirs"] == "/tmp/c/node-1/data"
    assert props["offsets.topic.replication.factor"] == "1"
    assert props["transaction.state.log.min.isr"] == "1"


def test_three_nodes_share_the_quorum_and_replicate_internal_topics():
    nodes = layouts(3)
    props = parse(render_server_properties(nodes[1], nodes, {}))
    assert props["node.id"] == "2"
    assert props["controller.quorum.voters"] == "1@127.0.0.1:19093,2@127.0.0.1:19094,3@127.0.0.1:19095"
    assert props["offsets.topic.replication.factor"] == "3"
    assert props["transaction.state.log.min.isr"] == "2"


def test_dedicated_controllers_hold_the_quorum_and_brokers_only_serve_clients():
    brokers = [NodeLayout(i, 9092 + i, None, Path(f"/tmp/c/node-{i}"), BROKER) for i in (1, 2, 3)]
    controller = NodeLayout(101, None, 19193, Path("/tmp/c/node-101"), CONTROLLER)
    nodes = [*brokers, controller]
    broker = parse(render_server_properties(brokers[0], nodes, {}))
    assert broker["process.roles"] == "broker" and broker["node.id"] == "1"
    assert broker["controller.quorum.voters"] == "101@127.0.0.1:19193"
    assert broker["listeners"] == "PLAINTEXT://127.0.0.1:9093" and broker["inter.broker.listener.name"] == "PLAINTEXT"
    # a broker-only node reaches the controllers through their listener: it must be mapped there too
    assert broker["listener.security.protocol.map"] == "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT"
    assert broker["offsets.topic.replication.factor"] == "3" and broker["transaction.state.log.min.isr"] == "2"
    quorum = parse(render_server_properties(controller, nodes, {}))
    assert quorum["process.roles"] == "controller" and quorum["node.id"] == "101"
    assert quorum["listeners"] == quorum["advertised.listeners"] == "CONTROLLER://127.0.0.1:19193"
    assert quorum["controller.quorum.voters"] == "101@127.0.0.1:19193" and "inter.broker.listener.name" not in quorum


def test_overrides_win_over_defaults():
    node = layouts(1)[0]
    props = parse(render_server_properties(node, [node], {"auto.create.topics.enable": "true", "num.io.threads": "4"}))
    assert props["auto.create.topics.enable"] == "true"
    assert props["num.io.threads"] == "4"


def test_values_are_escaped_for_java_properties():
    node = layouts(1)[0]
    text = render_server_properties(node, [node], {"ssl.keystore.location": "C:\\keys\\a.jks"})
    assert "ssl.keystore.location=C:\\\\keys\\\\a.jks\n" in text


def test_parse_overrides():
    assert parse_broker_overrides(["num.io.threads=8", " log.segment.bytes = 1048576 ", "a.b=x=y"]) == {
        "num.io.threads": "8", "log.segment.bytes": "1048576", "a.b": "x=y"}


@pytest.mark.parametrize("bad", ["num.io.threads", "=8", ""])
def test_parse_rejects_malformed(bad):
    with pytest.raises(ConfigError, match="expected KEY=VALUE"):
        parse_broker_overrides([bad])


def test_cluster_wiring_cannot_be_overridden():
    with pytest.raises(ConfigError, match="listeners: set by kafkabench"):
        parse_broker_overrides(["listeners=PLAINTEXT://0.0.0.0:9092"])


def test_secured_listeners_each_get_a_port_a_protocol_and_their_settings(tmp_path):
    security = prepare_secrets(parse_listeners("sasl_ssl,plaintext,mtls", "SCRAM-SHA-512"), tmp_path)
    node = NodeLayout(1, 9092, 9093, tmp_path / "node-1", listener_ports={"sasl_ssl": 9092, "plaintext": 9094,
                                                                           "mtls": 9095})
    props = parse(render_server_properties(node, [node], {}, security))
    assert props["listeners"] == ("SASL_SSL://127.0.0.1:9092,PLAINTEXT://127.0.0.1:9094,MTLS://127.0.0.1:9095,"
                                  "CONTROLLER://127.0.0.1:9093")
    assert props["listener.security.protocol.map"] == \
        "SASL_SSL:SASL_SSL,PLAINTEXT:PLAINTEXT,MTLS:SSL,CONTROLLER:PLAINTEXT"
    assert props["inter.broker.listener.name"] == "SASL_SSL"
    assert props["sasl.mechanism.inter.broker.protocol"] == props["sasl.enabled.mechanisms"] == "SCRAM-SHA-512"
    assert props["listener.name.mtls.ssl.client.auth"] == "required"
    assert props["ssl.keystore.type"] == "PEM" and props["ssl.keystore.location"].endswith("broker-keystore.pem")
    jaas = props["listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config"]
    assert f'password="{security.password("admin")}"' in jaas and 'username="admin"' in jaas

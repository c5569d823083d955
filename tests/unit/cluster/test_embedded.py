import base64
import socket

import pytest

from kafkabench.cluster.embedded import _diagnose, new_cluster_id
from kafkabench.cluster.ports import client_port, require_free
from kafkabench.errors import ClusterError


def test_cluster_ids_are_kafka_uuids_that_never_look_like_options():
    ids = {new_cluster_id() for _ in range(5000)}
    assert len(ids) == 5000
    for cluster_id in ids:
        assert len(cluster_id) == 22 and not cluster_id.startswith("-")
        assert len(base64.urlsafe_b64decode(cluster_id + "==")) == 16


def test_diagnose_picks_the_telling_line():
    log = ["[t] INFO starting", "[t] ERROR Fatal error during KafkaServer startup", "[t] INFO shut down"]
    assert _diagnose(log) == "[t] ERROR Fatal error during KafkaServer startup"
    assert "pick another with --port" in _diagnose(["java.net.BindException: Address already in use", "bye"])
    assert _diagnose(["only line"]) == "only line"
    assert _diagnose([]) == "no output"


def test_a_port_outside_what_a_broker_can_bind_is_refused_before_anything_starts():
    assert client_port(0, brokers=3) is None and client_port(None, brokers=3) is None  # 0: free ports, not a hang
    for port, brokers in ((-1, 1), (65536, 1), (65534, 3)):
        with pytest.raises(ClusterError, match=rf"--port {port}: broker 1's client port.*0 or none: free ports"):
            client_port(port, brokers)
    assert client_port(65533, brokers=3) == 65533
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen()
        with pytest.raises(ClusterError, match=rf"port {held.getsockname()[1]} on 127.0.0.1 is in use"):
            require_free(held.getsockname()[1])



def test_a_status_asked_while_a_node_restarts_keeps_the_new_process_and_takes_one_another_process_started_later(
        tmp_path):
    from kafkabench.cluster.embedded import started_later
    from kafkabench.cluster.state import NodeState

    def node(pid: int | None, started: float | None) -> NodeState:
        return NodeState(node_id=1, port=9001, controller_port=9101, directory=tmp_path, command=["java"], pid=pid,
                         started=started)

    mine = node(200, 2.0)  # restarted here: in memory at once
    assert not started_later(node(100, 1.0), mine)  # the file still names the process it replaced, until it saves
    assert not started_later(node(200, 2.0), mine) and not started_later(node(None, None), mine)
    assert started_later(node(300, 3.0), mine)  # another process (a lab attached to this cluster) restarted it since
    assert started_later(node(300, 3.0), node(None, None))

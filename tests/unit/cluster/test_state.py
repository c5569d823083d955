import json
import os

import psutil
import pytest

from kafkabench.cluster.state import ClusterState, NodeState, clear_state, load_state, save_state, state_path
from kafkabench.errors import ClusterError
from kafkabench.processes import running


def make_state(directory) -> ClusterState:
    nodes = [NodeState(node_id=i, port=9000 + i, controller_port=9100 + i, directory=directory / f"node-{i}",
                       command=["java", "kafka.Kafka"], pid=100 + i, started=1.5) for i in (1, 2, 3)]
    return ClusterState(kafka_version="4.1.2", cluster_id="abc", directory=directory, nodes=nodes)


def test_round_trip(tmp_path):
    state = make_state(tmp_path)
    save_state(state)
    loaded = load_state(tmp_path)
    assert loaded == state
    assert loaded.bootstrap_servers == "127.0.0.1:9001,127.0.0.1:9002,127.0.0.1:9003"
    assert not list(tmp_path.glob("*.tmp"))


def test_absent_state_is_none_and_clear_is_idempotent(tmp_path):
    assert load_state(tmp_path) is None
    clear_state(tmp_path)
    save_state(make_state(tmp_path))
    clear_state(tmp_path)
    assert load_state(tmp_path) is None


def test_foreign_file_is_a_clear_error(tmp_path):
    state_path(tmp_path).write_text('{"hello": 1}')
    with pytest.raises(ClusterError, match="not a kafkabench cluster state file"):
        load_state(tmp_path)


def test_unknown_node_lists_the_known_ones(tmp_path):
    with pytest.raises(ClusterError, match="no node 7 in this cluster; its nodes are 1, 2, 3"):
        make_state(tmp_path).node(7)


def test_dedicated_controllers_are_not_brokers_and_name_the_layout(tmp_path):
    state = make_state(tmp_path)
    assert state.layout == "3 combined broker+controller nodes"
    for node in state.nodes:
        node.controller_port, node.roles = None, "broker"
    state.nodes.append(NodeState(node_id=101, port=None, controller_port=9201, directory=tmp_path / "node-101",
                                 command=["java"], roles="controller"))
    assert state.layout == "3 brokers + 1 controller"
    assert [n.node_id for n in state.brokers] == [1, 2, 3] and [n.node_id for n in state.controllers] == [101]
    assert state.bootstrap_servers == "127.0.0.1:9001,127.0.0.1:9002,127.0.0.1:9003"


def test_a_state_file_an_older_kafkabench_wrote_still_finds_its_running_node(tmp_path):
    # it gave the node's start as psutil's create_time; this test process stands in for the node
    state = make_state(tmp_path).model_dump(mode="json")
    state["nodes"][0] |= {"pid": os.getpid(), "create_time": psutil.Process().create_time()}
    state["nodes"][1] |= {"pid": None, "create_time": None}
    del state["nodes"][0]["started"], state["nodes"][1]["started"]
    state_path(tmp_path).write_text(json.dumps(state))
    first, second, _ = load_state(tmp_path).nodes
    assert running(first.pid, first.started).pid == os.getpid() and second.started is None

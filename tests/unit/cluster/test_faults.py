import inspect

import pytest

from kafkabench.cluster.embedded import EmbeddedCluster
from kafkabench.cluster.faults import EmbeddedFaults, Faults, FaultsUnavailable, RefusedFaults
from kafkabench.errors import KafkabenchError

REFUSAL = (
    "fault injection needs the embedded cluster: kafka-1:9092,kafka-2:9092 was not started by kafkabench "
    "(drop --bootstrap-servers to let kafkabench start one)"
)
PROTOCOL_METHODS = ["leader_of", "kill", "pause", "resume", "restart", "restart_on", "node_version", "add_broker",
                    "bring_back", "wait_healthy", "broker_pids", "controllers", "node_ids", "broker_ids", "cut",
                    "delay", "lose", "limit", "heal"]
CALLS = {
    "leader_of": ("orders", 0),
    "kill": (1,),
    "pause": (1,),
    "resume": (1,),
    "restart": (1,),
    "restart_on": (1, "4.4.0"),
    "node_version": (1,),
    "add_broker": (),
    "bring_back": (),
    "wait_healthy": (5.0, None),
    "broker_pids": (),
    "controllers": (),
    "node_ids": (),
    "broker_ids": (),
    "cut": (1, [2]),
    "delay": (1, 50.0),
    "lose": (1, 5.0),
    "limit": (1, 10.0),
    "heal": (None,),
}


def test_the_calls_cover_the_whole_protocol():
    members = {name for name, _ in inspect.getmembers(Faults, inspect.isfunction) if not name.startswith("_")}
    assert members == set(PROTOCOL_METHODS) | {"network_unavailable"} == set(CALLS) | {"network_unavailable"}


def test_refused_faults_say_why_network_faults_cannot_be_had():
    assert RefusedFaults("kafka-1:9092,kafka-2:9092").network_unavailable() == REFUSAL


def test_a_loopback_cluster_says_how_to_get_network_faults():
    reason = EmbeddedFaults(EmbeddedCluster(brokers=3)).network_unavailable()
    assert "kafkabench cluster up --network isolated" in reason and "\n" not in reason


@pytest.mark.parametrize("method", PROTOCOL_METHODS)
def test_every_method_of_refused_faults_gives_the_same_one_line(method):
    faults = RefusedFaults("kafka-1:9092,kafka-2:9092")
    with pytest.raises(FaultsUnavailable) as caught:
        getattr(faults, method)(*CALLS[method])
    assert str(caught.value) == REFUSAL
    assert "\n" not in str(caught.value)
    assert isinstance(caught.value, KafkabenchError)


@pytest.mark.parametrize("implementation", [EmbeddedFaults, RefusedFaults])
@pytest.mark.parametrize("method", [*PROTOCOL_METHODS, "network_unavailable"])
def test_implementations_match_the_protocol_signatures(implementation, method):
    """runtime_checkable only checks that the names exist; the signatures are compared here."""
    assert inspect.signature(getattr(implementation, method)) == inspect.signature(getattr(Faults, method))


def test_both_implementations_satisfy_the_protocol_structurally():
    assert isinstance(EmbeddedFaults(EmbeddedCluster(brokers=3)), Faults)
    assert isinstance(RefusedFaults("localhost:9092"), Faults)
    assert Faults not in EmbeddedFaults.__mro__ and Faults not in RefusedFaults.__mro__  # structural, not inherited


def static_check(cluster: EmbeddedCluster) -> list[Faults]:
    """Never called: a type checker fails here if either class stops matching the protocol."""
    return [EmbeddedFaults(cluster), RefusedFaults("localhost:9092")]

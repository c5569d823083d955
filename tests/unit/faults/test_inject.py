"""Whom a fault hits and whom it cuts, resolved on a simulated cluster: brokers 1..3 (broker 1 leads partition 0,
replicas 1,2,3, ISR 1,2), controller 101."""

import pytest

from kafkabench.cluster.faults import CLIENTS
from kafkabench.errors import KafkabenchError
from kafkabench.faults import inject
from kafkabench.faults.spec import FaultSpec


class Cluster:
    def __init__(self, network: str | None = None) -> None:
        self.calls: list[tuple] = []
        self.network = network

    def leader_of(self, topic, partition=0):
        return 1

    def controllers(self):
        return [101]

    def broker_ids(self):
        return [1, 2, 3]

    def node_ids(self):
        return [1, 2, 3, 101]

    def network_unavailable(self):
        return self.network

    def cut(self, node_id, peers, *, direction="both", reset=False):
        self.calls.append(("cut", node_id, tuple(peers), direction, reset))
        return "impairment"

    def delay(self, node_id, delay_ms, jitter_ms=0, to=None):
        self.calls.append(("delay", node_id, delay_ms, jitter_ms, to))
        return "impairment"

    def heal(self, impairment):
        self.calls.append(("heal", impairment))


@pytest.fixture(autouse=True)
def partition_0(monkeypatch):
    monkeypatch.setattr(inject._Roles, "_describe", lambda self: ([1, 2, 3], [1, 2]))


def aimed(text: str, cluster: Cluster | None = None) -> inject.Aim:
    return inject.aim(FaultSpec.parse(text), cluster or Cluster(), "t", "")


def test_targets_resolve_by_role_when_the_fault_fires():
    assert aimed("kill-leader").victim == 1
    assert aimed("kill-follower").victim == 2  # in the ISR: broker 3 is not
    assert aimed("kill-controller").victim == 101
    assert aimed("pause-3").victim == 3


def test_a_partition_cuts_its_target_from_the_groups_it_names():
    assert aimed("partition-leader,from=followers").peers == (2, 3)
    assert aimed("partition-leader,from=followers+controllers").peers == (2, 3, 101)
    assert aimed("partition-2,from=brokers").peers == (1, 3)
    assert aimed("partition-leader,from=clients").peers == (CLIENTS,)
    assert aimed("partition-follower").peers == (CLIENTS, 1, 3, 101)  # all: every other node and the clients


def test_a_partition_that_would_cut_nothing_is_refused():
    with pytest.raises(KafkabenchError, match="the partition would cut nothing"):
        aimed("partition-101,from=controllers")


def test_a_directed_delay_resolves_its_other_end():
    assert aimed("delay-leader,ms=5,to=follower").to == 2
    assert aimed("delay-follower,ms=5,to=leader").to == 1
    assert aimed("delay-leader,ms=5,to=clients").to == CLIENTS
    assert aimed("delay-leader,ms=5").to is None


def test_inject_says_what_it_did_and_heals_it():
    cluster = Cluster()
    spec = FaultSpec.parse("partition-leader:9,from=followers+controllers,reset")
    done = inject.inject(spec, cluster, inject.aim(spec, cluster, "t", ""))
    assert done.what == "broker 1 cut from broker 2, broker 3, controller 101, both ways (refused with a TCP reset)"
    assert cluster.calls == [("cut", 1, (2, 3, 101), "both", True)]
    done.heal()
    assert cluster.calls[-1] == ("heal", "impairment")
    spec = FaultSpec.parse("delay-follower:9,ms=50,jitter=5,to=clients")
    assert inject.inject(spec, cluster, inject.aim(spec, cluster, "t", "")).what == \
        "broker 2 delayed 50 ± 5 ms on its packets to the clients"


def test_the_check_before_a_run_names_an_unknown_node_and_a_cluster_without_its_own_network():
    inject.check([FaultSpec.parse("kill-3"), FaultSpec.parse("pause-101")], Cluster())
    with pytest.raises(KafkabenchError, match="fault kill-7: no node 7 in this cluster; its nodes are 1, 2, 3, 101"):
        inject.check([FaultSpec.parse("kill-7")], Cluster())
    with pytest.raises(KafkabenchError, match="needs an isolated network"):
        inject.check([FaultSpec.parse("loss-leader,percent=5")], Cluster(network="needs an isolated network"))
    inject.check([FaultSpec.parse("kill-leader")], Cluster(network="needs an isolated network"))  # process faults: fine

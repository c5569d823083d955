"""The labs that take network faults: what each accepts, what it refuses in one line, and the cluster it asks for."""

import pytest
from pydantic import ValidationError

from kafkabench.labs.capacity import MaxRateLab
from kafkabench.labs.capacity.scenario import MaxRateScenario
from kafkabench.labs.delivery.lab import DeliveryLab
from kafkabench.labs.delivery.scenario import DeliveryScenario
from kafkabench.labs.durability import DurabilityLab
from kafkabench.labs.durability.scenario import DurabilityScenario


def test_max_rate_holds_a_network_fault_on_a_broker_named_by_id_on_a_cluster_big_enough():
    scenario = MaxRateScenario(faults=["delay-2,ms=20"], replication_factor=3, acks="all")
    assert MaxRateLab().network(scenario) == "isolated" and MaxRateLab().brokers_for(scenario) == 3
    plain = MaxRateScenario()
    assert MaxRateLab().network(plain) == "loopback" and MaxRateLab().brokers_for(plain) == 1


@pytest.mark.parametrize("fault, message", [
    ("kill-2", "max-rate holds network faults"),
    ("delay-follower,ms=5", "name the broker by id"),
    ("delay-2,ms=5,to=leader", "name the broker by id"),
    ("delay-2:5,ms=5", "it takes no duration"),
    ("loss-2,percent=300", "out of range"),
])
def test_max_rate_refuses_faults_it_cannot_hold(fault, message):
    with pytest.raises(ValidationError, match=message):
        MaxRateScenario(faults=[fault])


def test_delivery_asks_for_an_isolated_cluster_only_for_network_faults():
    assert DeliveryLab().network(DeliveryScenario(faults=["kill-leader:2"])) == "loopback"
    assert DeliveryLab().network(DeliveryScenario(faults=["kill-leader", "loss-leader,percent=5"])) == "isolated"


def test_durability_asks_for_an_isolated_cluster_when_its_probe_partitions():
    probing = DurabilityScenario(availability=True, availability_faults=["pause", "partition"])
    assert DurabilityLab().network(probing) == "isolated"
    assert DurabilityLab().network(probing.model_copy(update={"availability": False})) == "loopback"
    assert DurabilityLab().network(DurabilityScenario(availability=True)) == "loopback"
    with pytest.raises(ValidationError, match="availability_faults"):
        DurabilityScenario(availability_faults=["unplug"])

import pytest
from pydantic import ValidationError

from kafkabench.errors import ConfigError
from kafkabench.labs.durability.cells import SEED_TOPICS, Cell, check_fits, expand, run_order
from kafkabench.labs.durability.scenario import DurabilityScenario


def test_axes_expand_to_every_combination_per_client():
    scenario = DurabilityScenario(partitions=[1, 2], replication_factors=[1, 3], min_isr=[2], acks=["1", "all"],
                                  idempotence=["on", "off"], clients=["confluent", "java"])
    cells = expand(scenario)
    assert len(cells) == 2 * 2 * 2 * 2 * 2 and len(set(cells)) == len(cells)
    assert cells[0] == Cell("", 1, 1, 2, "1", True, "confluent")
    assert {c.client for c in cells[:16]} == {"confluent"}
    assert cells[0].producer_settings() == {"acks": "1", "enable.idempotence": "true"}
    assert cells[0].topic_settings() == {"min.insync.replicas": "2"}


def test_the_seed_preset_is_exactly_the_seeds_three_topics():
    cells = expand(DurabilityScenario(preset="seed"))
    assert [(c.name, c.partitions, c.replication_factor, c.min_isr, c.acks, c.idempotence) for c in cells] == [
        ("yolo", 2, 2, 1, "1", False), ("throughput-rf3", 2, 3, 1, "1", False), ("durable", 2, 3, 2, "all", False)]
    assert len(SEED_TOPICS) == 3 and cells[2].label == "durable confluent"


def test_min_isr_above_the_replicas_is_capped_and_said_so():
    capped, plain = Cell("", 1, 1, 2, "all", False, "java"), Cell("", 1, 3, 2, "all", False, "java")
    assert capped.effective_min_isr == 1 and "capped to 1 by 1 replica" in capped.min_isr_note
    assert plain.effective_min_isr == 2 and plain.min_isr_note == ""


def test_a_replication_factor_above_the_broker_count_is_refused_before_anything_runs():
    cells = expand(DurabilityScenario(replication_factors=[1, 3, 5]))
    with pytest.raises(ConfigError, match=r"replication factor 5 needs as many brokers; the cluster has 3"):
        check_fits(cells, 3)
    check_fits(cells[:2], 3)


def test_impossible_values_are_refused_by_the_scenario():
    for bad in ({"acks": ["2"]}, {"idempotence": ["maybe"]}, {"partitions": [0]}, {"count": None},
                {"rate": 0}, {"order": "random"}):
        with pytest.raises(ValidationError):
            DurabilityScenario(**bad)


def test_shuffled_order_differs_per_repeat_and_is_reproducible_from_its_seed():
    cells = expand(DurabilityScenario(partitions=[1, 2, 3, 4], acks=["1", "all"]))
    orders = [run_order(cells, repeat, "shuffled", 42) for repeat in range(3)]
    assert all(sorted(o, key=cells.index) == cells for o in orders)
    assert orders[0] != orders[1] or orders[1] != orders[2]
    assert orders == [run_order(cells, repeat, "shuffled", 42) for repeat in range(3)]
    assert run_order(cells, 0, "shuffled", 43) != orders[0]
    assert run_order(cells, 1, "sequential", 42) == cells and run_order(cells, 1, "reverse", 42) == cells[::-1]


def test_acks_or_idempotence_given_as_a_client_setting_is_refused_for_the_axis_that_sets_it():
    from kafkabench.config.properties import parse_overrides
    from kafkabench.labs.durability.run import check_request

    with pytest.raises(ConfigError, match="-X sets acks, which this lab sets per cell from --acks"):
        check_request(DurabilityScenario(overrides=parse_overrides(["acks=all"])))
    with pytest.raises(ConfigError, match="sets enable.idempotence, which this lab sets per cell from --idempotence"):
        check_request(DurabilityScenario(producer={"enable.idempotence": True}))
    check_request(DurabilityScenario(overrides=parse_overrides(["linger.ms=5"])))


def test_availability_is_on_with_the_seed_preset_unless_turned_off():
    assert DurabilityScenario(preset="seed").probes_availability
    assert not DurabilityScenario(preset="seed", availability=False).probes_availability
    assert not DurabilityScenario().probes_availability and DurabilityScenario(availability=True).probes_availability

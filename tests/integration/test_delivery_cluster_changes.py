"""Operations that change the cluster for good, under load, on a cluster of their own (2 brokers beside a dedicated
controller, started on Kafka 4.1.2): a rolling upgrade (every node restarted on 4.4.0 in turn, the controller first,
the features finalized after), then a broker added and given its share of the replicas; nothing acknowledged lost."""

import pytest

from kafkabench.cluster.target import Target
from kafkabench.core.events import SILENT
from kafkabench.labs.delivery.report import lines, tables, verdict_of
from kafkabench.labs.delivery.run import run_delivery
from kafkabench.labs.delivery.scenario import DeliveryScenario

from tests.conftest import FAST_FAILOVER, embedded

pytestmark = [pytest.mark.integration, pytest.mark.multibroker]


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    with embedded(brokers=2, controllers=1, directory=tmp_path_factory.mktemp("upgrade"), kafka_version="4.1.2",
                  broker_config_overrides=FAST_FAILOVER) as cluster:
        yield cluster


def under_load(cluster, tmp_path, operation: str, count: int, after: int):
    """The delivery lab's one cell (confluent, acks=all, idempotent, RF 2, 1,000/s) with `operation` once `after`
    messages were acknowledged, the sending ended 1 s after it: the document, its run and the operation's event."""
    document = run_delivery(DeliveryScenario(
        clients=["confluent"], modes=["async-close"], acks=["all"], idempotence=["on"], replication_factors=[2],
        min_isr=[1], partitions=2, count=count, rate=1000, operations=[operation], bounces=1, fault_after=after,
        end_after_heal=1, faults_must_fire=True), Target.embedded(cluster), tmp_path, SILENT)
    [run] = document.runs
    assert run.error is None and run.params["fault_coverage"] == "1 of 1 planned operations fired", run.params["faults"]
    [event] = run.params["faults"]
    return document, run, event


def test_a_rolling_upgrade_under_load_moves_every_node_to_the_new_release_finalizes_it_and_loses_nothing(
        cluster, tmp_path):
    document, run, event = under_load(cluster, tmp_path, "rolling-upgrade:4.4.0", count=200_000, after=1000)
    *restarts, finalized = event["steps"]
    [controller] = cluster.controller_ids()
    assert [(step["node"], step["role"], step["from"]) for step in restarts] == [
        (controller, "controller", "4.1.2"), (1, "broker", "4.1.2"), (2, "broker", "4.1.2")], event
    assert all(step["stop_s"] < step["serving_s"] <= step["in_isr_s"] for step in restarts), event
    assert [cluster.node_version(node) for node in (1, 2, controller)] == ["4.4.0"] * 3
    command = open(f"/proc/{cluster.state.node(1).pid}/cmdline", "rb").read().split(b"\0")
    assert any(b"kafka_2.13-4.4.0.jar" in part for part in command) and b"kafka.Kafka" in command
    assert finalized["finalize"] == "4.4" and finalized["metadata_version"] > finalized["metadata_version_before"]
    # each step a controlled shutdown: leadership handed over first, so no partition waits for a leader
    assert run.params["unavailable"]["worst_leaderless_s"] < 1.0, run.params["unavailable"]
    verdict = verdict_of(run)
    assert (verdict.lost, verdict.duplicated, verdict.reordered) == (0, 0, 0), run.counters
    assert verdict.acknowledged == run.params["sending_ended"]["sent"], run.counters
    cost = next(table for table in tables(document) if table.title.startswith("what each fault or operation cost"))
    [row] = cost.rows
    assert row.cells[0] == "rolling-upgrade:4.4.0" and row.cells[-1] == "0", row.cells
    said = "\n".join(lines(document))
    assert f"controller {controller} (4.1.2 -> 4.4.0) stopped" in said and "finalized to 4.4 at" in said


def test_a_broker_added_under_load_takes_its_share_of_the_replicas_throttled_and_nothing_is_lost(cluster, tmp_path):
    # after the upgrade above (or on 4.1.2 when run alone): the new broker runs the release its peers run
    releases = {cluster.node_version(broker) for broker in cluster.broker_ids()}
    document, run, event = under_load(cluster, tmp_path, "add-broker,throttle=50000000", count=100_000, after=2000)
    joined, *moved = event["steps"]
    new = joined["broker"]
    assert cluster.broker_ids() == [1, 2, new] and {cluster.node_version(new)} == releases
    assert joined["start_s"] <= joined["serving_s"] <= event["healed_s"], event
    # 2 partitions x RF 2 over 3 brokers: a share of 1 replica for the new one
    [step] = moved
    assert new in step["to"] and new not in step["from"] and step["bytes"] > 0 and step["done_s"] is not None, event
    assert f"broker {new} added" in event["what"] and "throttled at 50,000,000 B/s" in event["what"], event["what"]
    verdict = verdict_of(run)
    assert (verdict.lost, verdict.duplicated, verdict.reordered) == (0, 0, 0), run.counters
    assert f"broker {new} started" in "\n".join(lines(document))

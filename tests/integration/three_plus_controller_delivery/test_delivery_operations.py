"""Operations under load on 3 brokers beside a dedicated controller, while an idempotent acks=all producer sends: a
rolling restart with kill -9 and a preferred leader election after it, each partition's time without a leader
measured; a throttled reassignment, its moved bytes measured; nothing acknowledged lost."""

import pytest

from kafkabench.admin import KafkaAdmin
from kafkabench.cluster.target import Target
from kafkabench.core.events import SILENT
from kafkabench.labs.delivery.report import lines, tables, verdict_of
from kafkabench.labs.delivery.run import run_delivery
from kafkabench.labs.delivery.scenario import DeliveryScenario

pytestmark = [pytest.mark.integration, pytest.mark.multibroker]


@pytest.fixture
def target(cluster):
    return Target.embedded(cluster)


def leaderless_during(run, event) -> float:
    """The longest time a partition had no leader within the event's seconds."""
    partitions = run.params["unavailable"]["partitions"].values()
    return max((min(to, event["healed_s"]) - max(begun, event["fired_s"]) for figures in partitions
                for begun, to in figures["leaderless"] if to >= event["fired_s"] and begun <= event["healed_s"]),
               default=0.0)


def test_a_kill_rolling_restart_under_acks_all_min_insync_2_loses_nothing_and_times_each_partition_without_a_leader(
        target, tmp_path):
    # each broker in turn killed (kill -9) and started again, back in every ISR before the next, then the leaders the
    # restarts moved given back; the sending ends 1 s after (within 150 s: at most 300,000 messages; a CI run on a slow
    # machine took over 100 s for the restarts alone). A controlled restart's steps are the same calls without the
    # kill: the upgrade test (test_delivery_cluster_changes.py) runs them
    document = run_delivery(DeliveryScenario(
        clients=["confluent"], modes=["async-close"], acks=["all"], idempotence=["on"], min_isr=[2], partitions=3,
        count=300_000, rate=2000, operations=["rolling-restart,kill", "elect-leaders"], bounces=2,
        fault_after=2000, bounce_after_heal=0.5, end_after_heal=1, faults_must_fire=True, e2e=True), target, tmp_path,
        SILENT)
    [run] = document.runs
    assert run.error is None and run.params["fault_coverage"] == "2 of 2 planned operations fired", run.params["faults"]
    killed, election = run.params["faults"]
    # the last broker restarted gave its leadership away and got none back: the election gives it back
    [elected] = election["steps"]
    assert elected["skewed"] and elected["still_skewed"] == [], election
    assert election["what"].startswith(f"preferred leaders elected for {len(elected['skewed'])} partition(s)")
    assert [step["broker"] for step in killed["steps"]] == [1, 2, 3], killed
    assert all(step["stop_s"] < step["serving_s"] <= step["in_isr_s"] for step in killed["steps"]), killed
    assert "(kill -9, no hand-over)" in killed["what"]
    sent = run.params["sending_ended"]["sent"]
    verdict = verdict_of(run)
    assert (verdict.acknowledged, verdict.lost, verdict.duplicated, verdict.reordered) == (sent, 0, 0, 0), run.counters
    # a killed leader's partitions wait out its 3 s session (tests.conftest.FAST_FAILOVER) without a leader, seen even
    # when the looks are answered late (the kill's moment counts as a look)
    unavailable = run.params["unavailable"]
    assert set(unavailable["partitions"]) == {"0", "1", "2"} and unavailable["looks"] > 50, unavailable
    assert leaderless_during(run, killed) >= 1.0, unavailable
    assert [broker for broker, _, _ in unavailable["brokers_down"]] == [1, 2, 3], unavailable
    said = "\n".join(lines(document))
    assert "; 2 of 2 planned operations fired" in said and "broker 3 stopped" in said
    assert "the topic's partitions, looked at every 0.2 s" in said
    # the e2e probe read the messages, each stamped, while they were sent: the kill's leaderless seconds are in the
    # e2e of the messages that waited for a leader, and it read on after the leaders were given back
    probe, e2e = run.params["e2e_probe"], run.params["e2e_latency"]
    assert probe["unstamped"] == 0 and e2e["all"]["count"] == probe["received"], (probe, e2e)
    assert e2e["around"][0]["during"]["max_ms"] >= 500 and e2e["around"][1]["after"]["count"] > 0, e2e
    if probe["error"] is None:
        assert probe["received"] == sent, probe
    else:
        # its client is the cell's (confluent), and a client that stops reading is the run's finding, not the lab's
        # failure: twice in CI (kb-ci137, kb-ci144) it read all but the last 58 and 16 messages within 30 s of the
        # end, after the election. The lab says so, in the probe's figures and in the report
        assert probe["error"] == f"read {probe['received']:,} of {sent:,} records within 30 s of the producers' end"
        assert f"the e2e probe read {probe['received']:,} records, then: {probe['error']}" in said, said
    cost = next(table for table in tables(document) if table.title.startswith("what each fault or operation cost"))
    assert "e2e latency around rolling-restart,kill" in said and "e2e p99 during" in [c.name for c in cost.columns]


def test_a_throttled_reassignment_moves_a_brokers_replicas_under_load_and_says_how_many_bytes_moved(target, cluster,
                                                                                                   tmp_path):
    # RF 2 on 3 brokers: each of broker 1's replicas has a broker to go to; the throttle is set on the brokers and
    # the topic while the partitions move and removed after
    document = run_delivery(DeliveryScenario(
        clients=["confluent"], modes=["async-close"], acks=["all"], idempotence=["on"], replication_factors=[2],
        min_isr=[1], partitions=3, count=60_000, rate=2000, operations=["reassign,from=1,throttle=50000000"],
        bounces=1, fault_after=4000, end_after_heal=1, faults_must_fire=True), target, tmp_path, SILENT)
    [run] = document.runs
    assert run.error is None and run.params["fault_coverage"] == "1 of 1 planned operations fired", run.params["faults"]
    [event] = run.params["faults"]
    assert event["steps"] and all(1 in step["from"] and 1 not in step["to"] and step["bytes"] > 0
                                  and event["fired_s"] <= step["submitted_s"] <= step["done_s"] <= event["healed_s"]
                                  for step in event["steps"]), event
    assert "throttled at 50,000,000 B/s" in event["what"], event["what"]
    verdict = verdict_of(run)
    assert (verdict.lost, verdict.duplicated, verdict.reordered) == (0, 0, 0), run.counters
    with KafkaAdmin(cluster.bootstrap_servers) as admin:
        throttled = {key: value for key, value in admin.broker_configs(1).items() if "throttled" in key}
    assert throttled == {}, throttled  # removed: a broker lists these only while they are set
    said = "\n".join(lines(document))
    assert f"[{event['steps'][0]['partition']}] " in said and " bytes on the new replicas when done)" in said

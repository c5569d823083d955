"""Every alert rule `kafkabench monitor --write-config` writes, run by `promtool test rules` on series shaped like the
monitor's (counters from 0, one sample every 15 s): each scenario says which alerts fire, with their labels and
summary, at which times, and every other rule is checked silent at those times."""

from __future__ import annotations

import subprocess
from dataclasses import dataclass

import pytest
import yaml

from kafkabench.labs.monitor.config_files import write_config

from tests.debian import PROMTOOL

STEP = "15s"  # scrape and evaluation interval: fine enough to show the 30 s `for` of a broker going down


def probe(counter: str, broker: int, partition: int = 0) -> str:
    return f'kafkabench_end_to_end_messages_{counter}_total{{partition_id="{partition}",broker_id="{broker}"}}'


def series(metric: str, **labels: str) -> str:
    return metric + "{" + ",".join(f'{name}="{value}"' for name, value in labels.items()) + "}"


def alert(name: str, summary: str, severity: str = "page", **labels: str) -> tuple[str, dict, str]:
    return name, {**labels, "severity": severity}, summary


@dataclass(frozen=True)
class Scenario:
    """Series (promtool's expanding notation, one value per STEP from 0) and, per evaluation time, the alerts that
    fire then; a time with no alert listed checks that nothing fires."""

    name: str
    series: dict[str, str]
    firing: dict[str, list[tuple[str, dict, str]]]


HEALTHY_PROBES = {probe(counter, broker, partition): values
                  for broker, partition in ((1, 0), (2, 1))
                  for counter, values in (("produced", "0+1x48"), ("received", "0+1x48"), ("lost", "0+0x48"),
                                          ("produced_failed", "0+0x48"))}
LOST_ONE = alert("KafkabenchProbesLost", "Broker 1: 1 probe(s) not read back within the SLA in the last 5 minutes",
                 broker_id="1")
FAILED_ONE = alert("KafkabenchProbesFailed", "Broker 2: the producer reported 1 probe(s) failed in the last 5 minutes"
                   " (kafkabench_end_to_end_produce_errors_total says why)", broker_id="2")
DOWN = "is down: out of the cluster metadata or not answering"
LAG_RESTARTED = alert("KafkabenchMonitorPartRestarted", "The monitor's lag part restarted 1 time(s) in the last 10 "
                      "minutes", severity="ticket", part="lag")

SCENARIOS = [
    Scenario("nothing fires while probes come back and every counter stays at 0",
             {**HEALTHY_PROBES,
              series("kafkabench_broker_up", broker_id="1"): "1+0x48",
              series("kafkabench_monitor_part_restarts_total", part="prober"): "0+0x48",
              series("kafkabench_end_to_end_availability", broker_id="1"): "1+0x48",
              series("kafkabench_consumergroup_lag_seconds", consumergroup="g1", topic="orders", partition="0"):
                  "2+0x48"},
             {"1m": [], "5m": [], "12m": []}),
    # one probe of broker 1 is not read back and is declared lost at 3m: pending then, firing 1m later, silent again
    # once the 5m window no longer holds the 0 before the loss (from 8m), so `for` must stay well under 5m
    Scenario("a single lost probe fires KafkabenchProbesLost naming its broker",
             {**HEALTHY_PROBES, probe("received", 1): "0+1x10 10+1x37", probe("lost", 1): "0+0x11 1+0x36"},
             {"2m45s": [], "3m45s": [], "4m": [LOST_ONE], "7m45s": [LOST_ONE], "8m": []}),
    Scenario("a single failed probe fires KafkabenchProbesFailed naming its broker",
             {**HEALTHY_PROBES, probe("received", 2, 1): "0+1x10 10+1x37",
              probe("produced_failed", 2, 1): "0+0x10 1+0x37",
              series("kafkabench_end_to_end_produce_errors_total", error="_MSG_TIMED_OUT"): "0+0x10 1+0x37"},
             {"2m30s": [], "3m30s": [], "3m45s": [FAILED_ONE]}),
    # broker 3 leaves at 1m and its partition gets another leader 15 s later; broker 2 misses one answer at 1m
    Scenario("a broker down for 30 s fires KafkabenchBrokerDown, a shorter blip does not",
             {series("kafkabench_broker_up", broker_id="2"): "1+0x3 0 1+0x20",
              series("kafkabench_broker_up", broker_id="3"): "1+0x3 0+0x20",
              series("kafkabench_broker_seconds_since_probe_leader", broker_id="2"): "0+0x24",
              series("kafkabench_broker_seconds_since_probe_leader", broker_id="3"): "0+0x4 15+15x19"},
             {"1m15s": [],
              "1m30s": [alert("KafkabenchBrokerDown", f"Broker 3 {DOWN}; it last led its probe partition 30s ago",
                              broker_id="3")],
              "3m": [alert("KafkabenchBrokerDown", f"Broker 3 {DOWN}; it last led its probe partition 2m 0s ago",
                           broker_id="3")]}),
    Scenario("a down broker that still leads its probe partition is said to",
             {series("kafkabench_broker_up", broker_id="1"): "0+0x8",
              series("kafkabench_broker_seconds_since_probe_leader", broker_id="1"): "0+0x8"},
             {"1m": [alert("KafkabenchBrokerDown", f"Broker 1 {DOWN}; it still leads its probe partition",
                           broker_id="1")]}),
    Scenario("availability under the SLO for 2 minutes fires KafkabenchAvailabilityUnderSLO",
             {series("kafkabench_end_to_end_availability", broker_id="1"): "1+0x3 0.95+0x20",
              series("kafkabench_end_to_end_availability", broker_id="2"): "0.995+0x24"},
             {"2m45s": [], "3m": [alert("KafkabenchAvailabilityUnderSLO", "Broker 1: availability 95% under the SLO "
                                        "of 99%", broker_id="1")]}),
    # g1 stopped at 0: 315 s behind at 5m 15s (pending), firing 5 minutes later; g2 keeps up
    Scenario("lag over 300 s for 5 minutes fires KafkabenchConsumerLagSeconds",
             {series("kafkabench_consumergroup_lag_seconds", consumergroup="g1", topic="orders", partition="0"):
                  "0+15x44",
              series("kafkabench_consumergroup_lag_seconds", consumergroup="g2", topic="orders", partition="0"):
                  "1+0x44"},
             {"10m": [], "10m15s": [alert("KafkabenchConsumerLagSeconds", "Group g1 is 10m 15s behind on orders "
                                          "partition 0", consumergroup="g1", topic="orders", partition="0")]}),
    # broker 1's probes stop coming back after 1m: the 2m window holds no read from 3m, firing 1m later
    Scenario("probes sent through a broker and none read back in 2 minutes fire KafkabenchBrokerWithoutSuccessfulProbe",
             {**HEALTHY_PROBES, probe("received", 1): "0+1x4 4+0x44"},
             {"3m45s": [], "4m": [alert("KafkabenchBrokerWithoutSuccessfulProbe", "No probe through broker 1 came "
                                        "back in 2 minutes", broker_id="1")]}),
    Scenario("a broker nothing was sent through is not one without successful probe",
             {probe(counter, 3): "0+0x48" for counter in ("produced", "received", "lost", "produced_failed")},
             {"5m": [], "12m": []}),
    # the lag part restarts at 2m: at once a ticket, for as long as the 10m window holds the restart
    Scenario("a part of the monitor restarted fires KafkabenchMonitorPartRestarted, a ticket",
             {series("kafkabench_monitor_part_restarts_total", part="lag"): "0+0x7 1+0x48",
              series("kafkabench_monitor_part_restarts_total", part="prober"): "0+0x56"},
             {"1m45s": [], "2m": [LAG_RESTARTED], "11m45s": [LAG_RESTARTED], "12m": []}),
    # from the brokers' own metrics (the JMX exporter): broker 2 leads 2 under-replicated partitions from 1m, for a
    # minute and more; broker 1 has a blip of 30 s
    Scenario("under-replicated partitions for a minute fire KafkaUnderReplicatedPartitions naming the broker",
             {series("kafka_server_under_replicated_partitions", instance="10.213.0.12:9404"): "0+0x3 2+0x20",
              series("kafka_server_under_replicated_partitions", instance="10.213.0.11:9404"): "0+0x3 1 1 0+0x18"},
             {"1m45s": [], "2m": [alert("KafkaUnderReplicatedPartitions", "10.213.0.12:9404: 2 partition(s) it leads "
                                        "are under-replicated", instance="10.213.0.12:9404")]}),
    Scenario("a partition without a leader for 30 s fires KafkaOfflinePartitions",
             {series("kafka_controller_offline_partitions", instance="10.213.0.14:9404"): "0+0x3 3+0x10"},
             {"1m": [], "1m30s": [alert("KafkaOfflinePartitions", "3 partition(s) have no leader: they take no writes "
                                        "and serve no reads")]}),
]


def rule_names(alerts_file) -> set[str]:
    return {rule["alert"] for group in yaml.safe_load(alerts_file.read_text())["groups"] for rule in group["rules"]}


def rule_test(scenario: Scenario, names: set[str]) -> dict:
    """promtool's test file for the scenario: at each of its times, one alert_rule_test per rule, so any alert
    firing that the scenario does not list fails it too."""
    cases = []
    for eval_time, firing in scenario.firing.items():
        for name in sorted(names):
            cases.append({"eval_time": eval_time, "alertname": name, "exp_alerts": [
                {"exp_labels": labels, "exp_annotations": {"summary": summary}}
                for alertname, labels, summary in firing if alertname == name]})
    return {"rule_files": ["alerts.yml"], "evaluation_interval": STEP,
            "tests": [{"name": scenario.name, "interval": STEP,
                       "input_series": [{"series": name, "values": values} for name, values in scenario.series.items()],
                       "alert_rule_test": cases}]}


def promtool(*args: str) -> None:
    done = subprocess.run([str(PROMTOOL), *args], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, f"promtool {' '.join(args)}:\n{done.stdout}{done.stderr}"


@pytest.mark.parametrize("scenario", SCENARIOS, ids=[scenario.name for scenario in SCENARIOS])
def test_alert_rules_fire_exactly_as_the_scenario_says(prometheus_installed, tmp_path, scenario):
    write_config(tmp_path, "127.0.0.1:9645")
    test_file = tmp_path / "alerts_test.yml"  # promtool reads rule_files relative to it
    test_file.write_text(yaml.safe_dump(rule_test(scenario, rule_names(tmp_path / "alerts.yml")), sort_keys=False))
    promtool("test", "rules", str(test_file))


def test_every_alert_rule_fires_in_some_scenario(tmp_path):
    write_config(tmp_path, "127.0.0.1:9645")
    fired = {name for scenario in SCENARIOS for firing in scenario.firing.values() for name, _, _ in firing}
    assert fired == rule_names(tmp_path / "alerts.yml")


def test_promtool_check_rules_accepts_the_written_alerts(prometheus_installed, tmp_path):
    write_config(tmp_path, "127.0.0.1:9645")
    promtool("check", "rules", str(tmp_path / "alerts.yml"))

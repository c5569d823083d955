from kafkabench.cluster.target import Target
from kafkabench.core.results import Run
from kafkabench.labs.durability import apache as durability_apache
from kafkabench.labs.durability.apache import (DEFAULT_DEADLINE_S, JVM_START_S, apache_label, deadline_s,
                                               shown_command, tool_run)
from kafkabench.labs.durability.cells import Cell
from kafkabench.labs.throughput import apache as apache_tools
from kafkabench.labs.throughput.apache import ApacheReport, ApacheToolFailed, parse_producer_performance
from kafkabench.labs.throughput.scenario import ProduceScenario

SUMMARY = ("20000 records sent, 40000.0 records/sec (3.81 MB/sec), 12.5 ms avg latency, 80.0 ms max latency, "
           "10 ms 50th, 30 ms 95th, 60 ms 99th, 78 ms 99.9th.\n")
COMMAND = ["/usr/bin/java", "-Xmx1g", "-cp", "a.jar:b.jar", "org.apache.kafka.tools.ProducerPerformance", "--topic", "t",
           "--num-records", "20000", "--producer-props", "bootstrap.servers=localhost:9092", "acks=all",
           "sasl.jaas.config=secret stuff"]


def test_the_apache_run_is_a_cell_of_its_own_beside_the_java_one():
    cell = Cell("durable", 2, 3, 2, "all", False, "java")
    assert apache_label(cell.label) == "durable java (apache ProducerPerformance)" != cell.label


def test_its_figures_stay_as_the_tool_printed_them_and_its_duration_follows_from_them():
    report = ApacheReport("ProducerPerformance", 40000.0, 3.81, parse_producer_performance(SUMMARY), COMMAND)
    run = tool_run(report, {"cell": "durable java (apache ProducerPerformance)", "records": 20000}, {}, "4.1.2")
    assert (run.client, run.scenario, run.client_version) == ("apache", "produce", "4.1.2")
    assert run.throughput == {"records_per_s": 40000.0, "payload_mb_per_s": 3.81}
    assert run.counters == {"acked": 20000} and run.duration_s == 0.5  # the report's ms/msg: 0.025
    assert run.reported["p99_ms"] == 60 and run.stats == {}  # sampled whole ms: no latency statistic of ours
    assert run.params["cell"] == "durable java (apache ProducerPerformance)"


def test_the_kept_command_starts_at_the_tool_and_hides_secrets():
    shown = shown_command(COMMAND)
    assert shown.startswith("org.apache.kafka.tools.ProducerPerformance --topic t")
    assert "a.jar" not in shown and "acks=all" in shown
    assert "secret stuff" not in shown and "sasl.jaas.config=<redacted>" in shown


def test_the_tool_gets_three_times_what_kafkabench_took_for_the_same_job():
    produce = ProduceScenario(topic="t", count=20_000, timeout=60)
    assert deadline_s(Run(client="java", scenario="produce", duration_s=10.0), produce) == 30 + JVM_START_S + 60
    assert deadline_s(None, produce.model_copy(update={"rate": 1000.0})) == 60 + JVM_START_S + 60
    assert deadline_s(None, produce) == DEFAULT_DEADLINE_S


def test_a_failing_tool_is_a_run_with_its_error_and_the_cells_settings(monkeypatch):
    def fails(bootstrap, topic, records, size, rate, config, timeout_s):
        assert (topic, records, size, config["acks"], timeout_s) == ("t", 1500, 100, "all", 3 * 2.0 + JVM_START_S + 60)
        raise ApacheToolFailed("ProducerPerformance exited with 1: NOT_ENOUGH_REPLICAS")

    monkeypatch.setattr(durability_apache, "java_producer_settings",
                        lambda produce: {"acks": "all", "enable.idempotence": "false", "sasl.jaas.config": "x"})
    monkeypatch.setattr(apache_tools, "producer_performance", fails)
    ours = Run(client="java", scenario="produce", counters={"acked": 1500}, duration_s=2.0)
    cell = Cell("durable", 2, 3, 2, "all", False, "java")
    run = durability_apache.producer_performance_run(cell, ProduceScenario(topic="t", count=2000, timeout=60), [ours],
                                                     Target("localhost:9092", "external", "4.1.2"))
    assert run.error == "ProducerPerformance exited with 1: NOT_ENOUGH_REPLICAS" and run.client == "apache"
    assert run.params["cell"] == apache_label(cell.label) and run.params["records"] == 1500  # what ours acknowledged
    assert run.config == {"producer": {"acks": "all", "enable.idempotence": "false", "sasl.jaas.config": "<redacted>"},
                          "topic": {"min.insync.replicas": "2"}}

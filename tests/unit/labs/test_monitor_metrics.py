"""The monitor's metric names and labels, the files it writes for Prometheus and Grafana (every metric they use
exists), and its window table."""

import json
import re

import yaml

from kafkabench.labs.monitor.config_files import write_config
from kafkabench.labs.monitor.metrics import MonitorMetrics
from kafkabench.labs.monitor.report import window_tables


def exposition_names(metrics: MonitorMetrics) -> set[str]:
    text = metrics.exposition().decode()
    return {re.split(r"[{ ]", line, maxsplit=1)[0] for line in text.splitlines() if line and not line.startswith("#")}


def filled() -> MonitorMetrics:
    metrics = MonitorMetrics()
    labels = ("1", "2")  # partition_id, broker_id
    for counter in (metrics.produced, metrics.acked, metrics.produce_failed, metrics.received, metrics.lost,
                    metrics.late, metrics.duplicated, metrics.out_of_order):
        counter.labels(*labels).inc()
    metrics.produce_errors.labels("_MSG_TIMED_OUT").inc()
    metrics.produce_latency.labels(*labels).observe(0.002)
    metrics.roundtrip_latency.labels(*labels).observe(0.00015)
    metrics.commit_latency.labels("2").observe(0.003)
    metrics.availability.labels("2").set(0.5)
    for gauge in (metrics.lag, metrics.current_offset, metrics.lag_seconds):
        gauge.labels("g1", "orders", "0").set(7)
    metrics.lag_sum.labels("g1", "orders").set(7)
    metrics.members.labels("g1").set(0)
    metrics.topic_offset.labels("orders", "0").set(100)
    metrics.set_status("g1", "STOP")
    metrics.broker_up.labels("2").set(1)
    metrics.since_probe_leader.labels("2").set(0)
    metrics.know_part("prober")
    return metrics


def test_probe_metrics_are_named_like_kminions_under_kafkabench_and_lag_like_kafka_exporters():
    metrics = filled()
    text = metrics.exposition().decode()
    assert 'kafkabench_end_to_end_roundtrip_latency_seconds_bucket{broker_id="2",le="0.00025",partition_id="1"} 1.0' in text
    assert 'kafkabench_end_to_end_messages_lost_total{broker_id="2",partition_id="1"} 1.0' in text
    assert 'kafkabench_end_to_end_messages_produced_failed_total{broker_id="2",partition_id="1"} 1.0' in text
    assert 'kafkabench_end_to_end_produce_errors_total{error="_MSG_TIMED_OUT"} 1.0' in text
    assert 'kafkabench_broker_up{broker_id="2"} 1.0' in text
    assert 'kafkabench_broker_seconds_since_probe_leader{broker_id="2"} 0.0' in text
    assert 'kafkabench_monitor_part_restarts_total{part="prober"} 0.0' in text
    assert 'kafkabench_end_to_end_offset_commit_latency_seconds_count{coordinator_id="2"} 1.0' in text
    assert 'kafka_consumergroup_lag{consumergroup="g1",partition="0",topic="orders"} 7.0' in text
    assert 'kafkabench_consumergroup_lag_seconds{consumergroup="g1",partition="0",topic="orders"} 7.0' in text
    assert 'kafkabench_consumergroup_status{consumergroup="g1",status="STOP"} 1.0' in text
    assert 'kafkabench_consumergroup_status{consumergroup="g1",status="OK"} 0.0' in text
    assert "kafka_consumergroup_lag_sum" in text and "kafka_topic_partition_current_offset" in text


def test_every_metric_the_dashboard_and_the_alerts_use_is_one_the_monitor_exposes(tmp_path):
    files = write_config(tmp_path, "127.0.0.1:9645")
    names = exposition_names(filled())
    alerts = yaml.safe_load((tmp_path / "alerts.yml").read_text())
    dashboard = json.loads((tmp_path / "grafana/dashboards/kafkabench.json").read_text())
    rules = [rule for group in alerts["groups"] for rule in group["rules"]]
    # a summary may query a metric of its own (the broker down alert's seconds since it led its probe partition)
    expressions = [rule["expr"] for rule in rules] + [rule["annotations"]["summary"] for rule in rules]
    expressions += [target["expr"] for panel in dashboard["panels"] for target in panel["targets"]]
    used = {name for expr in expressions for name in re.findall(r"\b(kafka(?:bench)?_[a-z_]+)", expr)}
    # the brokers' own, as the JMX exporter's rules file (written beside them) names them
    brokers = {rule["name"] for rule in yaml.safe_load((tmp_path / "jmx-exporter.yaml").read_text())["rules"]}
    assert used and used <= names | brokers, used - names - brokers
    assert {"kafka_server_under_replicated_partitions", "kafka_controller_offline_partitions"} <= used
    assert {"kafkabench_end_to_end_produce_errors_total", "kafkabench_broker_up",
            "kafkabench_broker_seconds_since_probe_leader", "kafkabench_monitor_part_restarts_total"} <= used
    assert len(files) == 6 and yaml.safe_load((tmp_path / "prometheus.yml").read_text())["scrape_configs"][0][
        "static_configs"][0]["targets"] == ["127.0.0.1:9645"]
    provider = yaml.safe_load((tmp_path / "grafana/provisioning/dashboards/kafkabench.yml").read_text())
    assert provider["providers"][0]["options"]["path"] == str((tmp_path / "grafana/dashboards").resolve())


def test_the_window_tables_have_a_row_per_broker_and_per_group():
    window = {"t_s": 3.0, "brokers": {"1": {"sent": 2, "acked": 2, "received": 1, "lost": 1, "failed": 0,
                                            "duplicated": 0, "out_of_order": 0, "availability": 0.5,
                                            "roundtrip_p50_ms": 1.25, "roundtrip_p99_ms": 2.5, "state": "up",
                                            "state_for_s": 3.0, "since_probe_leader_s": 0.0}},
              "groups": {"g1": {"lag": 1200, "lag_seconds": 12.5, "lag_seconds_at_least": True, "status": "STOP",
                                "members": 0}},
              "parts": {"prober": {"state": "running", "restarts": 0}}}
    brokers, groups = window_tables(window)
    assert [row.cells[:5] for row in brokers.rows] == [["1", "up", "0.500", "1.25", "2.50"]]
    assert [row.cells for row in groups.rows] == [["g1", "STOP", "1,200", ">= 12.5", "0"]]
    assert [row.kind for table in (brokers, groups) for row in table.rows] == ["error", "error"]
    assert all(len(row.cells) == len(table.columns) for table in (brokers, groups) for row in table.rows)


def test_the_timeline_stays_bounded_and_its_counts_exact_however_long_the_watch():
    from kafkabench.labs.monitor.run import Timeline

    timeline = Timeline(interval_s=0.1)
    for i in range(Timeline.CAPACITY * 5 + 3):
        timeline.add({"t_s": i / 10, "sent": 3, "acked": 3, "received": 3 - (i == 77), "lost": int(i == 77), "failed": 0,
                      "duplicated": 0, "out_of_order": 0, "p50_ms": 1.0, "p99_ms": 2.0, "max_ms": 50.0 if i == 9000 else 2.0})
    entries = timeline.entries()
    assert len(entries) <= Timeline.CAPACITY + 1
    assert sum(e["sent"] for e in entries) == 3 * (Timeline.CAPACITY * 5 + 3) and sum(e["lost"] for e in entries) == 1
    assert max(e["max_ms"] for e in entries) == 50.0
    assert all(e["p99_ms"] is None for e in entries if e["windows"] > 1)
    assert entries[-1]["t_s"] == (Timeline.CAPACITY * 5 + 2) / 10

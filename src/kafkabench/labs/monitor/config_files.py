"""The files that put the monitor into an existing Prometheus and Grafana (`kafkabench monitor --write-config DIR`):

- `prometheus.yml`: a scrape job for the monitor's endpoint, loading `alerts.yml`;
- `alerts.yml`: probes lost, availability under the SLA, consumer lag in seconds over a threshold, a broker with
  no successful probe;
- `grafana/provisioning/datasources/kafkabench.yml` and `grafana/provisioning/dashboards/kafkabench.yml`: a
  Prometheus datasource and a dashboard provider reading `grafana/dashboards/`;
- `grafana/dashboards/kafkabench.json`: the dashboard (availability, roundtrip, lost / duplicated / out-of-order
  probes per broker, lag and lag seconds per group, group status).
"""

from __future__ import annotations

import json
from pathlib import Path

import yaml

DATASOURCE_UID = "kafkabench-prometheus"
AVAILABILITY_SLO = 0.99
LAG_SECONDS_ALERT = 300


def write_config(directory: Path, metrics_target: str, prometheus_url: str = "http://127.0.0.1:9090") -> list[Path]:
    files = {
        "prometheus.yml": yaml.safe_dump(prometheus_config(metrics_target), sort_keys=False),
        "alerts.yml": yaml.safe_dump(alert_rules(), sort_keys=False),
        "grafana/provisioning/datasources/kafkabench.yml": yaml.safe_dump(datasource(prometheus_url), sort_keys=False),
        "grafana/provisioning/dashboards/kafkabench.yml": yaml.safe_dump(dashboard_provider(directory), sort_keys=False),
        "grafana/dashboards/kafkabench.json": json.dumps(dashboard(), indent=1),
    }
    written = []
    for relative, text in files.items():
        path = directory / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        written.append(path)
    return written


def prometheus_config(metrics_target: str, interval_s: int = 5) -> dict:
    return {"global": {"scrape_interval": f"{interval_s}s", "evaluation_interval": f"{interval_s}s"},
            "rule_files": ["alerts.yml"],
            "scrape_configs": [{"job_name": "kafkabench", "static_configs": [{"targets": [metrics_target]}]}]}


def alert_rules() -> dict:
    def rule(name: str, expr: str, for_: str, summary: str) -> dict:
        return {"alert": name, "expr": expr, "for": for_, "labels": {"severity": "page"},
                "annotations": {"summary": summary}}

    return {"groups": [{"name": "kafkabench", "rules": [
        rule("KafkabenchProbesLost", "increase(kafkabench_end_to_end_messages_lost_total[5m]) > 0", "1m",
             "Probes through broker {{ $labels.broker_id }} were not read back within the SLA"),
        rule("KafkabenchAvailabilityUnderSLO", f"kafkabench_end_to_end_availability < {AVAILABILITY_SLO}", "2m",
             "Broker {{ $labels.broker_id }}: availability {{ $value }} under " + str(AVAILABILITY_SLO)),
        rule("KafkabenchConsumerLagSeconds", f"kafkabench_consumergroup_lag_seconds > {LAG_SECONDS_ALERT}", "5m",
             "Group {{ $labels.consumergroup }} is {{ $value }} s behind on {{ $labels.topic }}"),
        rule("KafkabenchBrokerWithoutSuccessfulProbe",
             "sum by (broker_id) (increase(kafkabench_end_to_end_messages_received_total[2m])) == 0"
             " and sum by (broker_id) (increase(kafkabench_end_to_end_messages_produced_total[2m])) > 0", "1m",
             "No probe through broker {{ $labels.broker_id }} came back in 2 minutes"),
    ]}]}


def datasource(prometheus_url: str) -> dict:
    return {"apiVersion": 1, "datasources": [{"name": "kafkabench Prometheus", "uid": DATASOURCE_UID,
                                              "type": "prometheus", "access": "proxy", "url": prometheus_url}]}


def dashboard_provider(directory: Path) -> dict:
    return {"apiVersion": 1, "providers": [{"name": "kafkabench", "type": "file", "folder": "kafkabench",
                                            "options": {"path": str((directory / "grafana" / "dashboards").resolve())}}]}


def dashboard() -> dict:
    panels = [
        ("Availability per broker", "kafkabench_end_to_end_availability", "{{broker_id}}", "percentunit"),
        ("Roundtrip p99 per broker", "histogram_quantile(0.99, sum by (le, broker_id) "
         "(rate(kafkabench_end_to_end_roundtrip_latency_seconds_bucket[1m])))", "{{broker_id}}", "s"),
        ("Roundtrip p50 per broker", "histogram_quantile(0.5, sum by (le, broker_id) "
         "(rate(kafkabench_end_to_end_roundtrip_latency_seconds_bucket[1m])))", "{{broker_id}}", "s"),
        ("Probes lost per broker", "sum by (broker_id) (increase(kafkabench_end_to_end_messages_lost_total[1m]))",
         "{{broker_id}}", "short"),
        ("Probes duplicated / out of order", "sum by (broker_id) (increase(kafkabench_end_to_end_messages_duplicated_total[1m])"
         " + increase(kafkabench_end_to_end_messages_out_of_order_total[1m]))", "{{broker_id}}", "short"),
        ("Produce errors", "sum by (error) (increase(kafkabench_end_to_end_messages_produced_failed_total[1m]))",
         "{{error}}", "short"),
        ("Consumer lag per group", "sum by (consumergroup) (kafka_consumergroup_lag)", "{{consumergroup}}", "short"),
        ("Consumer lag seconds per group", "max by (consumergroup) (kafkabench_consumergroup_lag_seconds)",
         "{{consumergroup}}", "s"),
        ("Group status (1 = current)", "kafkabench_consumergroup_status == 1", "{{consumergroup}} {{status}}", "short"),
    ]
    return {"uid": "kafkabench-monitor", "title": "kafkabench monitor", "schemaVersion": 39, "refresh": "10s",
            "time": {"from": "now-1h", "to": "now"},
            "panels": [{"id": index + 1, "type": "timeseries", "title": title,
                        "datasource": {"type": "prometheus", "uid": DATASOURCE_UID},
                        "gridPos": {"h": 8, "w": 12, "x": 12 * (index % 2), "y": 8 * (index // 2)},
                        "fieldConfig": {"defaults": {"unit": unit}, "overrides": []},
                        "targets": [{"refId": "A", "expr": expr, "legendFormat": legend,
                                     "datasource": {"type": "prometheus", "uid": DATASOURCE_UID}}]}
                       for index, (title, expr, legend, unit) in enumerate(panels)]}

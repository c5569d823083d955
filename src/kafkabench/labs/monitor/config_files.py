"""The files that put the monitor into an existing Prometheus and Grafana (`kafkabench monitor --write-config DIR`):

- `prometheus.yml`: a scrape job for the monitor's endpoint, and one for the brokers' own metrics (the JMX exporter
  agent kafkabench's embedded brokers run, `cluster/jmx-exporter.yaml`, also written here for your own brokers),
  loading `alerts.yml`;
- `alerts.yml`: probes lost or failed per broker, availability under the SLO, consumer lag in seconds over a
  threshold, a broker with no successful probe, a broker down, under-replicated and offline partitions as the
  brokers and controllers report them (page); a part of the monitor restarted (ticket). The
  probe counters exist at 0 before their first event, so one lost probe is an increase the rules see;
- `grafana/provisioning/datasources/kafkabench.yml` and `grafana/provisioning/dashboards/kafkabench.yml`: a
  Prometheus datasource and a dashboard provider reading `grafana/dashboards/`;
- `grafana/dashboards/kafkabench.json`: the dashboard (availability, roundtrip, lost / duplicated / out-of-order
  probes per broker, produce errors, brokers up, lag and lag seconds per group, group status; from the brokers: the
  Produce request's phases, under-replicated partitions, request handlers' and network processors' idle share).
"""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path

import yaml

DATASOURCE_UID = "kafkabench-prometheus"
AVAILABILITY_SLO = 0.99
LAG_SECONDS_ALERT = 300


BROKER_RULES = "jmx-exporter.yaml"


def write_config(directory: Path, metrics_target: str, prometheus_url: str = "http://127.0.0.1:9090",
                 broker_targets: list[str] | None = None) -> list[Path]:
    """`broker_targets`: HOST:PORT of the brokers' JMX exporters (none: the job is written empty, to fill in)."""
    files = {
        "prometheus.yml": yaml.safe_dump(prometheus_config(metrics_target, broker_targets or []), sort_keys=False),
        BROKER_RULES: resources.files("kafkabench.cluster").joinpath(BROKER_RULES).read_text(),
        "alerts.yml": yaml.safe_dump(alert_rules(), sort_keys=False, width=120),
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


def prometheus_config(metrics_target: str, broker_targets: list[str], interval_s: int = 5) -> dict:
    return {"global": {"scrape_interval": f"{interval_s}s", "evaluation_interval": f"{interval_s}s"},
            "rule_files": ["alerts.yml"],
            "scrape_configs": [{"job_name": "kafkabench", "static_configs": [{"targets": [metrics_target]}]},
                               {"job_name": "kafka-brokers", "static_configs": [{"targets": broker_targets}]}]}


def alert_rules() -> dict:
    def rule(name: str, expr: str, for_: str, summary: str, severity: str = "page") -> dict:
        return {"alert": name, "expr": expr, "for": for_, "labels": {"severity": severity},
                "annotations": {"summary": summary}}

    def increase_per_broker(counter: str, window: str) -> str:
        return f"sum by (broker_id) (increase(kafkabench_end_to_end_messages_{counter}_total[{window}]))"

    count = '{{ $value | printf "%.0f" }}'  # increase() extrapolates: 1.02 lost probes reads as 1
    # the broker's seconds since it last led its probe partition, when the monitor has that series: 0 means it
    # still leads it, and its probes fail until another broker takes over
    since_leader = ("{{ with printf `kafkabench_broker_seconds_since_probe_leader{broker_id='%s'}` $labels.broker_id"
                    " | query }}{{ with . | first | value }}; it last led its probe partition {{ humanizeDuration . }}"
                    " ago{{ else }}; it still leads its probe partition{{ end }}{{ end }}")
    slo = f"{AVAILABILITY_SLO * 100:g}%"
    # increase() over 5m stays > 0 for about 5 minutes after a single loss or failure: `for` must stay well under that
    return {"groups": [{"name": "kafkabench", "rules": [
        rule("KafkabenchProbesLost", f"{increase_per_broker('lost', '5m')} > 0", "1m",
             f"Broker {{{{ $labels.broker_id }}}}: {count} probe(s) not read back within the SLA in the last 5"
             " minutes"),
        rule("KafkabenchProbesFailed", f"{increase_per_broker('produced_failed', '5m')} > 0", "1m",
             f"Broker {{{{ $labels.broker_id }}}}: the producer reported {count} probe(s) failed in the last 5 minutes"
             " (kafkabench_end_to_end_produce_errors_total says why)"),
        rule("KafkabenchAvailabilityUnderSLO", f"kafkabench_end_to_end_availability < {AVAILABILITY_SLO}", "2m",
             "Broker {{ $labels.broker_id }}: availability {{ $value | humanizePercentage }} under the SLO of " + slo),
        rule("KafkabenchConsumerLagSeconds", f"kafkabench_consumergroup_lag_seconds > {LAG_SECONDS_ALERT}", "5m",
             "Group {{ $labels.consumergroup }} is {{ $value | humanizeDuration }} behind on {{ $labels.topic }}"
             " partition {{ $labels.partition }}"),
        # probes sent through the broker, none read back: said outright, without waiting for each probe's SLA
        rule("KafkabenchBrokerWithoutSuccessfulProbe",
             f"{increase_per_broker('received', '2m')} == 0 and {increase_per_broker('produced', '2m')} > 0", "1m",
             "No probe through broker {{ $labels.broker_id }} came back in 2 minutes"),
        rule("KafkabenchBrokerDown", "kafkabench_broker_up == 0", "30s",
             "Broker {{ $labels.broker_id }} is down: out of the cluster metadata or not answering" + since_leader),
        # the brokers' own view (their JMX exporter): replicas behind, and partitions no broker leads
        rule("KafkaUnderReplicatedPartitions", "kafka_server_under_replicated_partitions > 0", "1m",
             f"{{{{ $labels.instance }}}}: {count} partition(s) it leads are under-replicated"),
        rule("KafkaOfflinePartitions", "sum(kafka_controller_offline_partitions) > 0", "30s",
             f"{count} partition(s) have no leader: they take no writes and serve no reads"),
        # the part came back by itself and measures again, but what it measured around the restart is missing
        rule("KafkabenchMonitorPartRestarted", "increase(kafkabench_monitor_part_restarts_total[10m]) > 0", "0s",
             f"The monitor's {{{{ $labels.part }}}} part restarted {count} time(s) in the last 10 minutes", "ticket"),
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
        ("Produce errors", "sum by (error) (increase(kafkabench_end_to_end_produce_errors_total[1m]))", "{{error}}",
         "short"),
        ("Brokers up", "kafkabench_broker_up", "{{broker_id}}", "short"),
        ("Consumer lag per group", "sum by (consumergroup) (kafka_consumergroup_lag)", "{{consumergroup}}", "short"),
        ("Consumer lag seconds per group", "max by (consumergroup) (kafkabench_consumergroup_lag_seconds)",
         "{{consumergroup}}", "s"),
        ("Group status (1 = current)", "kafkabench_consumergroup_status == 1", "{{consumergroup}} {{status}}", "short"),
        ("Produce time per phase, p99 (brokers)",
         'max by (phase) (kafka_network_request_time_ms{request="Produce", quantile="0.99", phase!="TotalTimeMs"})',
         "{{phase}}", "ms"),
        ("Under-replicated partitions (brokers)", "kafka_server_under_replicated_partitions", "{{instance}}", "short"),
        ("Request handlers and network processors idle (brokers)",
         "kafka_server_request_handler_idle_ratio or kafka_network_processor_idle_ratio",
         "{{__name__}} {{instance}}", "percentunit"),
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

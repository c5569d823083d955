"""Every embedded node runs Prometheus's JMX exporter with kafkabench's rules file: `cluster status` names its
address, and it serves the metrics operators watch under the rules' names, the Produce phases among them once a
record was produced."""

import re
import urllib.request

import pytest
from confluent_kafka import Producer

from kafkabench.admin import quiet_client_config
from kafkabench.cluster import EmbeddedCluster

pytestmark = [pytest.mark.integration, pytest.mark.quick]  # seconds on the session cluster: in `make test-quick`
SAMPLE = re.compile(r'^(\w+)(\{[^}]*\})? (\S+)$')


def scrape(address: str) -> dict[str, list[tuple[str, float]]]:
    with urllib.request.urlopen(f"http://{address}/metrics", timeout=10) as answer:
        text = answer.read().decode()
    found: dict[str, list[tuple[str, float]]] = {}
    for line in text.splitlines():
        if (match := SAMPLE.match(line)) and match[1].startswith("kafka_"):
            found.setdefault(match[1], []).append((match[2] or "", float(match[3])))
    return found


def test_each_node_serves_the_operators_metrics_at_the_address_status_gives(kafka_cluster, admin, topic_name):
    if not isinstance(kafka_cluster, EmbeddedCluster):
        pytest.skip("the metrics agent runs on kafkabench's embedded brokers")
    admin.create_topic(topic_name)
    producer = Producer(quiet_client_config(kafka_cluster.connection, acks="all"))
    producer.produce(topic_name, b"x")
    assert producer.flush(30) == 0
    (broker,) = kafka_cluster.status().brokers
    assert broker.metrics == f"127.0.0.1:{kafka_cluster.state.brokers[0].metrics_port}"
    metrics = scrape(broker.metrics)
    for name in ("kafka_server_under_replicated_partitions", "kafka_server_under_min_isr_partitions",
                 "kafka_server_isr_shrinks_total", "kafka_network_processor_idle_ratio",
                 "kafka_server_request_handler_idle_ratio", "kafka_log_flush_time_ms", "kafka_controller_offline_partitions",
                 "kafka_network_requests_total"):
        assert name in metrics, f"{name} missing; served: {sorted(metrics)}"
    produce = [labels for labels, _ in metrics["kafka_network_request_time_ms"] if 'request="Produce"' in labels]
    phases = {re.search(r'phase="(\w+)"', labels)[1] for labels in produce}
    assert {"RequestQueueTimeMs", "LocalTimeMs", "RemoteTimeMs", "ResponseQueueTimeMs", "ResponseSendTimeMs",
            "TotalTimeMs"} <= phases
    assert any('quantile="0.99"' in labels for labels in produce)
    assert dict(metrics["kafka_server_under_replicated_partitions"])[""] == 0

"""The broker's request logger, switched on and off at run time on a real broker: while on, each Produce is found
by the offset it wrote, with the broker's phases adding up to its total; once off, nothing more is logged."""

import pytest
from confluent_kafka import Producer

from kafkabench.admin import KafkaAdmin, quiet_client_config
from kafkabench.cluster import EmbeddedCluster
from kafkabench.cluster.request_log import LOGGER, PHASES, produce_timings

pytestmark = [pytest.mark.integration, pytest.mark.quick]  # seconds on the session cluster: in `make test-quick`


def produce_one_at_a_time(cluster, topic: str, count: int) -> None:
    producer = Producer(quiet_client_config(cluster.connection, acks="all"))
    for i in range(count):
        producer.produce(topic, f"v{i}".encode())
        assert producer.flush(30) == 0


def test_each_produce_is_found_by_its_offset_with_phases_that_add_up(kafka_cluster, topic_name):
    if not isinstance(kafka_cluster, EmbeddedCluster):
        pytest.skip("reads the embedded broker's log")
    with KafkaAdmin(kafka_cluster.connection) as admin:
        admin.create_topic(topic_name)
        admin.set_broker_logger(1, LOGGER, "DEBUG")
        try:
            produce_one_at_a_time(kafka_cluster, topic_name, 3)
        finally:
            admin.set_broker_logger(1, LOGGER, "WARN")
        produce_one_at_a_time(kafka_cluster, topic_name, 1)  # offset 3: written with the logger off
    lines = kafka_cluster.log_file(1).read_text(errors="replace").splitlines()
    timings = produce_timings(lines, topic_name)
    assert sorted(timings) == [(0, 0), (0, 1), (0, 2)]
    for timing in timings.values():
        assert timing.total_ms > 0 and abs(sum(timing.phases[p] for p in PHASES) - timing.total_ms) < 0.01

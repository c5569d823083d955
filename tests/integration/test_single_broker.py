"""One real broker (the session cluster): produce and read back, and the admin helpers every lab uses."""

import pytest
from confluent_kafka import Consumer, Producer

from kafkabench.admin import quiet_client_config
from kafkabench.errors import KafkaAdminError
from kafkabench.roundtrip import round_trip

from tests.conftest import wait_for

pytestmark = [pytest.mark.integration, pytest.mark.quick]  # seconds on the session cluster: in `make test-quick`


def test_produce_and_read_back_with_confluent_kafka(kafka_cluster, admin, topic_name):
    admin.create_topic(topic_name, partitions=2)
    values = [f"record-{i}".encode() * (i + 1) for i in range(20)]
    producer = Producer(quiet_client_config(kafka_cluster.bootstrap_servers, acks="all"))
    failures = []
    for i, value in enumerate(values):
        producer.produce(topic_name, value, key=str(i).encode(), on_delivery=lambda err, msg: err and failures.append(err))
    assert producer.flush(30) == 0
    assert failures == []

    consumer = Consumer(quiet_client_config(kafka_cluster.bootstrap_servers, **{
        "group.id": topic_name, "auto.offset.reset": "earliest", "enable.auto.commit": False}))
    consumer.subscribe([topic_name])
    received = []
    try:
        for _ in range(200):
            if len(received) == len(values):
                break
            msg = consumer.poll(0.5)
            if msg is not None:
                assert msg.error() is None
                received.append(msg.value())
    finally:
        consumer.close()
    assert sorted(received) == sorted(values)


def test_create_describe_and_delete_topic(admin, topic_name):
    info = admin.create_topic(topic_name, partitions=3, config={"max.message.bytes": "2097152", "compression.type": "zstd"})
    assert [p.partition for p in info.partitions] == [0, 1, 2]
    assert info.replication_factor == 1 and info.is_usable()
    described = admin.describe_topic(topic_name, with_configs=True)
    assert described.configs["max.message.bytes"] == "2097152"
    assert described.configs["compression.type"] == "zstd"
    admin.delete_topic(topic_name)

    def gone() -> bool:  # a loaded broker's metadata can name a deleted topic for a moment
        try:
            admin.describe_topic(topic_name)
        except KafkaAdminError as exc:
            assert f"describe topic {topic_name} failed" in str(exc)
            return True
        return False

    wait_for(gone, 30, f"{topic_name} to be gone from the metadata")
    admin.delete_topic(topic_name)  # already gone: fine with missing_ok


def test_creating_an_existing_topic_is_a_clear_error(admin, topic_name):
    admin.create_topic(topic_name)
    with pytest.raises(KafkaAdminError, match=f"create topic {topic_name} failed: .*already exists"):
        admin.create_topic(topic_name)
    # exist_ok: a name made for the call exists because this call made it (its request sent again), or it only
    # had to exist
    assert admin.create_topic(topic_name, exist_ok=True).is_usable()


def test_replication_beyond_the_cluster_is_refused(admin, kafka_cluster, topic_name):
    too_many = len(admin.brokers()) + 1
    with pytest.raises(KafkaAdminError, match=f"create topic {topic_name} failed"):
        admin.create_topic(topic_name, replication_factor=too_many)


def test_stored_bytes_per_partition_grow_with_what_was_written(kafka_cluster, admin, topic_name):
    admin.create_topic(topic_name, partitions=2, config={"compression.type": "uncompressed"})
    # a new partition's log shows in DescribeLogDirs a moment after its leader shows in the metadata
    def both_described():
        sizes = {(r.partition, r.size_bytes) for r in admin.stored_bytes(topic_name)}
        return sizes if len(sizes) == 2 else None

    assert wait_for(both_described, 30, "both partitions' logs to be described") == {(0, 0), (1, 0)}
    producer = Producer(quiet_client_config(kafka_cluster.bootstrap_servers, **{"compression.type": "none"}))
    payload = bytes(range(256)) * 40  # 10 KiB
    for _ in range(10):
        producer.produce(topic_name, payload, partition=1)
    assert producer.flush(30) == 0
    sizes = {r.partition: r.size_bytes for r in admin.stored_bytes(topic_name)}
    assert sizes[0] == 0
    assert 10 * len(payload) < sizes[1] < 10 * len(payload) * 1.1  # payload plus record/batch headers


def test_round_trip_reports_what_it_did(kafka_cluster, admin):
    result = round_trip(kafka_cluster.bootstrap_servers, size_bytes=4096)
    assert result.size_bytes == 4096 and result.offset == 0
    assert 0 < result.produce_ms < 30_000 and 0 < result.consume_ms < 30_000
    with pytest.raises(KafkaAdminError):
        admin.describe_topic(result.topic)  # cleaned up after itself


def test_a_groups_lag_reads_through_an_open_transaction_and_says_why_a_read_committed_member_cannot_start(
        kafka_cluster, admin, topic_name):
    from confluent_kafka import KafkaException, TopicPartition

    from kafkabench.admin import GroupLag

    admin.create_topic(topic_name, partitions=2)
    bootstrap, group = kafka_cluster.bootstrap_servers, f"{topic_name}-group"
    producer = Producer(quiet_client_config(bootstrap))
    for partition in (0, 1):
        for n in range(10):
            producer.produce(topic_name, f"v{n}".encode(), partition=partition)
    assert producer.flush(30) == 0
    member = Consumer(quiet_client_config(bootstrap, **{"group.id": group, "enable.auto.commit": False}))
    def committed() -> bool:  # a fresh cluster answers NOT_COORDINATOR while it creates __consumer_offsets
        try:
            member.commit(offsets=[TopicPartition(topic_name, 0, 3)], asynchronous=False)
        except KafkaException:
            return False
        return True

    wait_for(committed, 60, "a first commit")
    copier = Producer(quiet_client_config(bootstrap, **{"transactional.id": f"{topic_name}-copier"}))
    copier.init_transactions(30)
    copier.begin_transaction()  # offsets 7 sent in a transaction left open
    copier.send_offsets_to_transaction([TopicPartition(topic_name, 0, 7)], member.consumer_group_metadata(), 30)
    with GroupLag(bootstrap, group, topic_name, 2, timeout_s=3) as lag:
        assert lag.behind() == {0: 7, 1: 10}  # the committed 3, not the pending 7; none committed on 1: from 0
        assert "a transaction carrying the group's offsets is still open" in lag.unstable()
        copier.commit_transaction(30)
        assert wait_for(lambda: lag.behind() == {0: 3, 1: 10}, 30, "the transaction's offsets committed")
        assert lag.unstable() is None
    member.close()

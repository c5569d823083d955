import pytest

from kafkabench.config.translate import translate
from kafkabench.errors import ConfigError

PRODUCER = {"acks": "1", "linger.ms": "0", "max.request.size": "1303269", "batch.size": "32768",
            "buffer.memory": "33554432", "compression.type": "none", "enable.idempotence": "false"}
CONSUMER = {"fetch.max.wait.ms": "10", "max.partition.fetch.bytes": "1303269", "fetch.max.bytes": "52428800",
            "receive.buffer.bytes": "65536", "enable.auto.commit": "false", "isolation.level": "read_committed"}


def test_java_passes_through():
    assert translate("java", "producer", PRODUCER).config == PRODUCER


def test_librdkafka_names_and_not_applicable():
    producer = translate("confluent", "producer", PRODUCER)
    assert producer.config["message.max.bytes"] == "1303269"
    assert producer.config["linger.ms"] == "0" and producer.config["acks"] == "1"
    assert "max.request.size" not in producer.config
    assert producer.not_applicable == ["buffer.memory"]
    consumer = translate("confluent", "consumer", CONSUMER)
    assert consumer.config["fetch.wait.max.ms"] == "10"
    assert consumer.config["socket.receive.buffer.bytes"] == "65536"
    assert consumer.not_applicable == []


def test_librdkafka_response_buffer_grows_with_fetch_max_bytes():
    consumer = translate("confluent", "consumer", {"fetch.max.bytes": "150000000"})
    assert consumer.config["receive.message.max.bytes"] == str(150000000 + 512)


def test_librdkafka_rejects_a_bad_value_with_the_java_name():
    with pytest.raises(ConfigError, match="confluent \\(librdkafka\\) rejects max.request.size=lots"):
        translate("confluent", "producer", {"max.request.size": "lots"})


def test_a_socket_buffer_left_to_the_os_is_each_librarys_own_way_of_saying_so():
    os_default = {"send.buffer.bytes": "-1", "receive.buffer.bytes": "-1"}
    confluent = translate("confluent", "producer", os_default).config
    assert (confluent["socket.send.buffer.bytes"], confluent["socket.receive.buffer.bytes"]) == ("0", "0")
    assert translate("kafka-python", "consumer", os_default).config == {"send_buffer_bytes": None,
                                                                         "receive_buffer_bytes": None}
    assert translate("java", "consumer", os_default).config == os_default


def test_kafka_python_snake_case_and_python_values():
    producer = translate("kafka-python", "producer", PRODUCER)
    assert producer.config == {"acks": 1, "linger_ms": 0, "max_request_size": 1303269, "batch_size": 32768,
                               "compression_type": None, "enable_idempotence": False}
    assert producer.not_applicable == ["buffer.memory"]
    consumer = translate("kafka-python", "consumer", CONSUMER)
    assert consumer.config["fetch_max_wait_ms"] == 10 and consumer.config["enable_auto_commit"] is False
    assert consumer.config["isolation_level"] == "read_committed"


def test_aiokafka_renames_batch_size_and_lists_what_it_lacks():
    producer = translate("aiokafka", "producer", PRODUCER)
    assert producer.config["max_batch_size"] == 32768
    assert producer.config["acks"] == 1
    assert "buffer.memory" in producer.not_applicable
    consumer = translate("aiokafka", "consumer", CONSUMER)
    assert "receive.buffer.bytes" in consumer.not_applicable


def test_bad_number_for_a_python_client():
    with pytest.raises(ConfigError, match="linger.ms=soon: not a valid"):
        translate("kafka-python", "producer", {"linger.ms": "soon"})


def test_acks_all_stays_a_string():
    assert translate("kafka-python", "producer", {"acks": "all"}).config["acks"] == "all"


def test_unknown_client():
    with pytest.raises(ConfigError, match="no config translation for client 'rust'"):
        translate("rust", "producer", {})

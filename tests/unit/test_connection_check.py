"""The connection check's pure parts: bootstrap servers as librdkafka reads them, and librdkafka 2.16's texts
(copied from real failures) read for their cause."""

import socket

import pytest

from kafkabench.connection import Connection
from kafkabench.connection_check import (
    ConnectionProblem, Server, advertised_broker, check_connection, cleaned, client_certificate_refused, last_error,
    login_refused, split_servers,
)
from kafkabench.errors import KafkabenchError

WRONG_PASSWORD = ("sasl_ssl://127.0.0.1:47533/bootstrap: SASL authentication error: Authentication failed during "
                  "authentication due to invalid credentials with SASL mechanism SCRAM-SHA-512 (after 333ms in state "
                  "AUTH_REQ)")
NO_SASL = ("sasl_plaintext://127.0.0.1:43753/bootstrap: SASL SCRAM-SHA-512 mechanism handshake failed: Broker: Request "
           "not valid in current SASL state: broker's supported mechanisms:  (after 2ms in state AUTH_HANDSHAKE)")
OTHER_MECHANISM = ("sasl_ssl://127.0.0.1:43579/bootstrap: SASL SCRAM-SHA-256 mechanism handshake failed: Broker: "
                   "Unsupported SASL mechanism: broker's supported mechanisms: SCRAM-SHA-512 (after 302ms in state "
                   "AUTH_HANDSHAKE)")
NO_CLIENT_CERTIFICATE = ("ssl://127.0.0.1:59137/bootstrap: Receive failed: error:0A000412:SSL routines::ssl/tls alert "
                         "bad certificate: SSL alert number 42 (after 2ms in state APIVERSION_QUERY)")
CLOSED_ONCE_UP = ("FAIL [rdkafka#producer-16] [thrd:ssl://127.0.0.1:45315/bootstrap]: ssl://127.0.0.1:45315/bootstrap: "
                  "Disconnected: SSL connection closed by peer (after 2ms in state UP)")
PLAINTEXT_CLOSED_ONCE_UP = ("127.0.0.1:52131/bootstrap: Disconnected: connection closed by peer: receive 0 after POLLIN "
                            "(after 1ms in state UP)")
CLOSED_AT_VERSIONS = ("127.0.0.1:45315/bootstrap: Disconnected: connection closed by peer: receive 0 after POLLIN "
                      "(after 3ms in state APIVERSION_QUERY)")
ADVERTISED = ("ssl://127.0.0.1:38727/1: SSL handshake failed: error:0A000086:SSL routines::certificate verify failed "
              "(after 48ms in state SSL_HANDSHAKE)")
DOWN = "1/1 brokers are down"


def test_connection_problem_is_a_kafkabench_error():
    assert issubclass(ConnectionProblem, KafkabenchError)


def test_bootstrap_servers_as_librdkafka_reads_them():
    assert split_servers(" a:1, SSL://b:2,[::1]:3,c ,[fe80::1],") == [
        Server("a", 1), Server("b", 2), Server("::1", 3), Server("c", 9092), Server("fe80::1", 9092)]
    assert [str(server) for server in split_servers("a:1,[::1]:3")] == ["a:1", "[::1]:3"]


@pytest.mark.parametrize("text", ["a:x", "a:1:2", "[::1", " , "])
def test_a_bootstrap_server_that_is_not_host_port_is_one_line(text):
    with pytest.raises(ConnectionProblem) as refused:
        split_servers(text)
    assert "\n" not in str(refused.value) and ("host:port" in str(refused.value))


def test_every_unreachable_server_is_named_with_why():
    ports = []
    for _ in range(2):
        with socket.socket() as spare:
            spare.bind(("127.0.0.1", 0))
            ports.append(spare.getsockname()[1])
    with pytest.raises(ConnectionProblem) as refused:
        check_connection(Connection(f"127.0.0.1:{ports[0]},127.0.0.1:{ports[1]}"), timeout_s=1)
    assert str(refused.value) == (f"cannot connect to 127.0.0.1:{ports[0]} (connection refused) or "
                                  f"127.0.0.1:{ports[1]} (connection refused); is the cluster up?")


def test_a_refused_login():
    assert login_refused([WRONG_PASSWORD, DOWN])
    assert not login_refused([NO_SASL, OTHER_MECHANISM, NO_CLIENT_CERTIFICATE, CLOSED_ONCE_UP, DOWN])


def test_a_refused_client_certificate():
    assert client_certificate_refused([DOWN, NO_CLIENT_CERTIFICATE])
    assert client_certificate_refused(["ssl://h:1/bootstrap: SSL routines::tlsv13 alert certificate required"])
    assert not client_certificate_refused([ADVERTISED, CLOSED_ONCE_UP])


def test_the_cause_is_the_last_text_that_is_not_the_summary():
    assert last_error([WRONG_PASSWORD, DOWN]) == WRONG_PASSWORD
    assert last_error([DOWN]) == DOWN
    assert last_error([]) == "no answer"


def test_the_broker_named_is_the_advertised_one_not_the_bootstrap_server():
    assert advertised_broker(ADVERTISED) == Server("127.0.0.1", 38727)
    assert advertised_broker(f"FAIL [rdkafka#producer-8] [thrd:ssl://127.0.0.1:38727/1]: {ADVERTISED}") == \
        Server("127.0.0.1", 38727)
    assert advertised_broker("sasl_ssl://[::1]:9093/12: Disconnected") == Server("::1", 9093)
    assert advertised_broker(WRONG_PASSWORD) is None and advertised_broker(CLOSED_ONCE_UP) is None


def test_cleaned_text_drops_prefix_broker_and_timing_and_scrubs_secrets():
    assert cleaned(CLOSED_ONCE_UP) == "Disconnected: SSL connection closed by peer"
    assert cleaned(WRONG_PASSWORD).startswith("SASL authentication error: Authentication failed")
    assert cleaned("h:1/bootstrap: bad\n  password=\"hunter22\" given") == 'bad password="<redacted>" given'

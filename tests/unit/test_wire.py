"""The SaslHandshake probe against servers in a thread that are not Kafka: each is no answer, within its bound.
What a real listener answers (mechanisms, no SASL) is tested against real brokers in
tests/integration/test_connection_errors.py."""

import socket
import struct
import threading
import time

import pytest

from kafkabench.wire import ask_sasl


def serve_once(reply) -> int:
    """A loopback server that reads one request, then does `reply(connection)`; its port."""
    listener = socket.create_server(("127.0.0.1", 0))

    def answer():
        with listener:
            connection, _ = listener.accept()
            with connection:
                connection.recv(4096)
                reply(connection)

    threading.Thread(target=answer, daemon=True).start()
    return listener.getsockname()[1]


@pytest.mark.parametrize("reply", [
    lambda connection: None,  # closes
    lambda connection: connection.sendall(b"HTTP/1.1 400 Bad Request\r\n\r\n"),  # not Kafka: a size way too big
    lambda connection: connection.sendall(struct.pack(">i", 4) + b"\x00\x00\x00\x01"),  # too short to decode
], ids=["closed", "http", "truncated"])
def test_a_server_that_is_not_kafka_is_no_answer(reply):
    assert ask_sasl("127.0.0.1", serve_once(reply), None, "PLAIN", timeout_s=5) is None


def test_a_silent_server_is_no_answer_within_the_bound():
    stop = threading.Event()
    port = serve_once(lambda connection: stop.wait(10))
    started = time.monotonic()
    try:
        assert ask_sasl("127.0.0.1", port, None, "PLAIN", timeout_s=0.3) is None
    finally:
        stop.set()
    assert time.monotonic() - started < 5  # the socket's timeout, not the server's 10 s

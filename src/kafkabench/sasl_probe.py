"""Whether a listener takes SASL, asked of the server itself in one Kafka request (SaslHandshake), so a diagnosis
rests on what the server answered, not on which of librdkafka's log lines arrived before a deadline.

A SASL listener answers a SaslHandshake before any login, with the mechanisms it offers; a listener without SASL
answers it with ILLEGAL_SASL_STATE (the broker's KafkaApis). Anything else (closed, silent, not Kafka) is no
answer. The request is encoded by kafka-python's protocol classes, a dependency already.
"""

from __future__ import annotations

import socket
import ssl
import struct
from typing import NamedTuple

from kafka.protocol.sasl import SaslHandshakeRequest, SaslHandshakeResponse

_VERSION = 1
_NONE, _UNSUPPORTED_MECHANISM, _ILLEGAL_SASL_STATE = 0, 33, 34
_MAX_ANSWER = 1 << 16  # a handshake answer is a list of mechanism names: anything bigger is not Kafka


class SaslAnswer(NamedTuple):
    takes_sasl: bool
    mechanisms: tuple[str, ...]  # what a SASL listener offers


def ask_sasl(host: str, port: int, tls: ssl.SSLContext | None, mechanism: str, timeout_s: float) -> SaslAnswer | None:
    """What the listener at host:port says to a SaslHandshake for `mechanism` (over TLS with `tls`); None when it
    closes, stays silent for `timeout_s` or answers something else."""
    request = SaslHandshakeRequest[_VERSION](mechanism=mechanism)
    request.with_header(correlation_id=1, client_id="kafkabench-check")
    try:
        with socket.create_connection((host, port), timeout=timeout_s) as raw:
            with (tls.wrap_socket(raw, server_hostname=host) if tls else raw) as conn:
                conn.sendall(request.encode(header=True, framed=True))
                (size,) = struct.unpack(">i", _read(conn, 4))
                if not 0 < size <= _MAX_ANSWER:
                    return None
                answer = SaslHandshakeResponse.decode(_read(conn, size), version=_VERSION, header=True)
    except (OSError, ValueError, struct.error):
        return None
    if answer.error_code == _ILLEGAL_SASL_STATE:
        return SaslAnswer(False, ())
    if answer.error_code in (_NONE, _UNSUPPORTED_MECHANISM):
        return SaslAnswer(True, tuple(answer.mechanisms))
    return None


def _read(conn: socket.socket, size: int) -> bytes:
    data = b""
    while len(data) < size:
        chunk = conn.recv(size - len(data))
        if not chunk:
            raise ConnectionError("closed")
        data += chunk
    return data

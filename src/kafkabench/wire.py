"""Single Kafka requests on a raw socket, so an answer rests on what the server itself said, not on which of a client
library's log lines arrived before a deadline, and no client library's state (or bug) is involved.

`ask_sasl`: whether a listener takes SASL. A SASL listener answers a SaslHandshake before any login, with the
mechanisms it offers; a listener without SASL answers it with ILLEGAL_SASL_STATE (the broker's KafkaApis).
`answers`: whether a broker answers at all; ApiVersions is served before any login, on every listener.
Anything else (closed, silent, not Kafka) is no answer. Requests are encoded by kafka-python's protocol classes, a
dependency already.
"""

from __future__ import annotations

import socket
import ssl
import struct
from typing import NamedTuple

from kafka.protocol.metadata import ApiVersionsRequest, ApiVersionsResponse
from kafka.protocol.sasl import SaslHandshakeRequest, SaslHandshakeResponse

_VERSION = 1
_NONE, _UNSUPPORTED_MECHANISM, _ILLEGAL_SASL_STATE = 0, 33, 34
_MAX_ANSWER = 1 << 16  # a handshake or ApiVersions answer is a short list: anything bigger is not Kafka


class SaslAnswer(NamedTuple):
    takes_sasl: bool
    mechanisms: tuple[str, ...]  # what a SASL listener offers


def ask_sasl(host: str, port: int, tls: ssl.SSLContext | None, mechanism: str, timeout_s: float) -> SaslAnswer | None:
    """What the listener at host:port says to a SaslHandshake for `mechanism` (over TLS with `tls`); None when it
    closes, stays silent for `timeout_s` or answers something else."""
    try:
        answer = _ask(host, port, tls, SaslHandshakeRequest[_VERSION](mechanism=mechanism), SaslHandshakeResponse,
                      _VERSION, timeout_s)
    except (OSError, ValueError, struct.error):
        return None
    if answer is None:
        return None
    if answer.error_code == _ILLEGAL_SASL_STATE:
        return SaslAnswer(False, ())
    if answer.error_code in (_NONE, _UNSUPPORTED_MECHANISM):
        return SaslAnswer(True, tuple(answer.mechanisms))
    return None


def answers(host: str, port: int, tls: ssl.SSLContext | None, timeout_s: float) -> bool:
    """Whether the broker at host:port answers within `timeout_s`: an ApiVersions answer, or over TLS a handshake it
    refused with an alert (a listener that wants a client certificate says so). A paused broker accepts the
    connection (the kernel does) and says nothing; a dead one refuses it."""
    try:
        return _ask(host, port, tls, ApiVersionsRequest[0](), ApiVersionsResponse, 0, timeout_s) is not None
    except ssl.SSLError as exc:
        return not isinstance(exc, (ssl.SSLEOFError, ssl.SSLZeroReturnError))
    except (OSError, ValueError, struct.error):
        return False


def unverified_tls() -> ssl.SSLContext:
    """TLS that checks no certificate: for asking whether a server speaks, not who it is (the clients check that)."""
    context = ssl.create_default_context()
    context.check_hostname, context.verify_mode = False, ssl.CERT_NONE
    return context


def _ask(host: str, port: int, tls: ssl.SSLContext | None, request, response_class, version: int, timeout_s: float):
    request.with_header(correlation_id=1, client_id="kafkabench-check")
    with socket.create_connection((host, port), timeout=timeout_s) as raw:
        with (tls.wrap_socket(raw, server_hostname=host) if tls else raw) as conn:
            conn.sendall(request.encode(header=True, framed=True))
            (size,) = struct.unpack(">i", _read(conn, 4))
            if not 0 < size <= _MAX_ANSWER:
                return None
            return response_class.decode(_read(conn, size), version=version, header=True)


def _read(conn: socket.socket, size: int) -> bytes:
    data = b""
    while len(data) < size:
        chunk = conn.recv(size - len(data))
        if not chunk:
            raise ConnectionError("closed")
        data += chunk
    return data

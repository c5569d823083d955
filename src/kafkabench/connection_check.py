"""A pre-flight check before any lab starts: a connection that cannot work is told in one line (what is wrong, what
to do), not by a lab hanging on librdkafka's retries. A healthy one costs a TCP connect and one metadata request.
Only on failure is the cause looked for, from what the server does rather than from which of librdkafka's lines
arrived in time (a connection closed at the first request is logged at a level that depends on how many requests
were in flight): TLS handshakes of our own (librdkafka says "certificate verify failed" whether the CA or the host
name is wrong, and a plaintext client on a TLS port sees a closed socket), a SaslHandshake of our own (whether the
listener takes SASL, which mechanisms), and librdkafka's words only where they are an error it always reports
(a refused login, a refused client certificate).
"""

from __future__ import annotations

import logging
import re
import socket
import ssl
import time
from pathlib import Path
from typing import NamedTuple

from confluent_kafka import KafkaException
from confluent_kafka.admin import AdminClient
from cryptography import x509

from kafkabench.admin import quiet_client_config
from kafkabench.config.redact import scrub_text
from kafkabench.config.security import HOSTNAME_KEY, ClientSecurity
from kafkabench.connection import Connection
from kafkabench.errors import ConnectionProblem
from kafkabench.wire import ask_sasl, unverified_tls

__all__ = ["ConnectionProblem", "check_connection"]

_FIRST_STEP_S = 1.0  # a healthy broker answers within this; a refusing one has said why by then
_NAME_MISMATCH = {62, 64}  # OpenSSL's X509_V_ERR_HOSTNAME_MISMATCH, X509_V_ERR_IP_ADDRESS_MISMATCH
_UNTRUSTED = {2, 18, 19, 20, 21}  # no issuer certificate, self-signed (in the chain), no local issuer, leaf alone
_NOT_TLS = {"WRONG_VERSION_NUMBER", "UNEXPECTED_EOF_WHILE_READING", "RECORD_LAYER_FAILURE", "PACKET_LENGTH_TOO_LONG"}
_SERVER = re.compile(r"(?:\[(?P<v6>[^\]]+)\]|(?P<host>[^:\[\]]+))(?::(?P<port>\d+))?")
_BROKER = re.compile(r"(?:^|\]: )(?:[a-z_]+://)?(?P<host>\[[^\]]+\]|[^\s:/\[\]]+):(?P<port>\d+)/\d+: ")
_PREFIX = re.compile(r"^(?:\w+ \[[^\]]*\] \[[^\]]*\]: )?(?:[a-z_]+://)?\S+/(?:bootstrap|\d+): ")
_SUFFIX = re.compile(r" \(after \d+ms in state \w+\)$")


class Server(NamedTuple):
    host: str
    port: int

    def __str__(self) -> str:
        return f"[{self.host}]:{self.port}" if ":" in self.host else f"{self.host}:{self.port}"


def check_connection(connection: Connection, timeout_s: float = 10.0) -> None:
    """Return quietly when the first reachable bootstrap server serves metadata; else raise ConnectionProblem with
    one line. A setting that cannot work anywhere (an unreadable key file) is a ConfigError before any socket."""
    security = ClientSecurity.from_java(connection.settings)
    server = first_reachable(connection.bootstrap_servers, timeout_s)
    said = _metadata(connection.at(str(server)), timeout_s)
    if said is not None:
        raise ConnectionProblem(_diagnosis(security, server, said, timeout_s))


def split_servers(bootstrap_servers: str) -> list[Server]:
    """`host:port,...` as librdkafka reads it: an optional `PROTOCOL://`, `[v6]:port`, port 9092 when left out."""
    servers = []
    for item in filter(None, (part.strip() for part in bootstrap_servers.split(","))):
        match = _SERVER.fullmatch(item.split("://", 1)[-1])
        if match is None:
            raise ConnectionProblem(f"bootstrap server {item!r}: expected host:port")
        servers.append(Server(match["v6"] or match["host"], int(match["port"] or 9092)))
    if not servers:
        raise ConnectionProblem("no bootstrap server given; pass --bootstrap-servers host:port")
    return servers


def first_reachable(bootstrap_servers: str, timeout_s: float) -> Server:
    """The first server taking a TCP connection: every message then names one broker, and a cluster that is down
    is told at once, not when librdkafka's reconnects have used up the timeout."""
    failures = []
    for server in split_servers(bootstrap_servers):
        try:
            socket.create_connection(server, timeout=timeout_s).close()
            return server
        except OSError as exc:
            reason = ("connection refused" if isinstance(exc, ConnectionRefusedError) else "unknown host"
                      if isinstance(exc, socket.gaierror) else f"no answer within {timeout_s:g} s"
                      if isinstance(exc, TimeoutError) else exc.strerror or str(exc))
            failures.append(f"{server} ({reason})")
    raise ConnectionProblem(f"cannot connect to {' or '.join(failures)}; is the cluster up?")


def _metadata(connection: Connection, timeout_s: float) -> list[str] | None:
    """None once metadata is served; else what librdkafka said. Asked in doubling steps with its callbacks served
    in between, so a refused login ends the wait within a second instead of at the timeout."""
    said: list[str] = []
    # some causes (a connection closed at the first request) are only logged: the filter keeps the text and drops
    # the record, and this logger, made outside the registry, has no parent to hand it to
    logger = logging.Logger("kafkabench.connection_check", logging.WARNING)
    logger.addFilter(lambda record: said.append(record.getMessage()))
    admin = AdminClient(quiet_client_config(connection, logger=logger, error_cb=lambda error: said.append(error.str())))
    deadline, step = time.monotonic() + timeout_s, _FIRST_STEP_S
    try:
        while True:
            try:
                admin.list_topics(timeout=max(0.01, min(step, deadline - time.monotonic())))
                return None
            except KafkaException:
                admin.poll(0)
            if said or time.monotonic() >= deadline:
                return said
            step *= 2
    finally:
        del admin  # librdkafka joins its threads as the handle goes: none is left behind


def _diagnosis(security: ClientSecurity, server: Server, said: list[str], timeout_s: float) -> str:
    """The first cause that fits, in the order a client gets in (transport, login, first request), else what did
    not answer. Looked for at the broker librdkafka failed on: past the bootstrap server, that is an address the
    cluster advertises, which the certificate must name too."""
    server = advertised_broker(last_error(said)) or server
    if security.uses_tls:
        transport = _tls_problem(security, server, said, timeout_s)
    else:
        transport = _plaintext_problem(security, server, timeout_s)
    return transport or _sasl_problem(security, server, said, timeout_s) or _unanswered(security, server, said,
                                                                                        timeout_s)


def _unanswered(security: ClientSecurity, server: Server, said: list[str], timeout_s: float) -> str:
    if not said:  # librdkafka heard nothing either: no cause to tell, only what kept silent
        return (f"{server} took the connection but sent no metadata within {timeout_s:g} s (a paused or overloaded "
                "broker?); check the broker's log")
    return (f"cannot get metadata from {server} with security.protocol={security.protocol} within {timeout_s:g} s: "
            f"{cleaned(last_error(said))}")


def _plaintext_problem(security: ClientSecurity, server: Server, timeout_s: float) -> str | None:
    """A plaintext client on a TLS port sees only a closed connection; a handshake of our own tells why."""
    try:
        _handshake(server, _trusting(None), timeout_s)
    except OSError as exc:  # a TLS alert (say, a client certificate is wanted) is TLS spoken too
        if "ALERT" not in str(getattr(exc, "reason", None)):
            return None
    wanted = "SASL_SSL" if security.uses_sasl else "SSL (or SASL_SSL)"
    return (f"{server} speaks TLS but security.protocol={security.protocol}; set security.protocol={wanted} "
            "with ssl.truststore.location")


def _tls_problem(security: ClientSecurity, server: Server, said: list[str], timeout_s: float) -> str | None:
    """The broker's certificate checked as librdkafka checks it, with OpenSSL's reason kept (which CA, which
    names); then a client certificate the broker refused, whose alert librdkafka heard (we would wait for it)."""
    try:
        _handshake(server, _trusting(security), timeout_s)
    except ssl.SSLCertVerificationError as exc:
        return _certificate_refused(security, server, exc, timeout_s)
    except OSError as exc:
        if isinstance(exc, (ssl.SSLEOFError, ConnectionResetError)) or getattr(exc, "reason", None) in _NOT_TLS:
            plain = "SASL_PLAINTEXT" if security.uses_sasl else "PLAINTEXT (or SASL_PLAINTEXT)"
            return (f"{server} does not speak TLS but security.protocol={security.protocol}; set "
                    f"security.protocol={plain}, or use the cluster's TLS listener")
    if not client_certificate_refused(said):
        return None
    chain_file = security.cert_file or security.keystore_file
    if chain_file is None and security.cert_chain_pem is None:
        return (f"{server} requires a client certificate (ssl.client.auth=required); set ssl.keystore.location "
                "to a PEM with your key and certificate")
    where = f"ssl.keystore.location {chain_file}" if chain_file else "ssl.keystore.certificate.chain"
    by = "".join(f" (issued by '{issuer}')" for issuer in _issuers(chain_file, security.cert_chain_pem)[:1])
    return f"{server} refused the client certificate in {where}{by}; use one issued by a CA the broker trusts"


def _certificate_refused(security: ClientSecurity, server: Server, exc: ssl.SSLCertVerificationError,
                         timeout_s: float) -> str:
    broker = _peer_certificate(server, timeout_s)
    if exc.verify_code in _NAME_MISMATCH and broker is not None:
        return (f"host name mismatch: connected to {server.host}, the broker's certificate names {_names(broker)} "
                f"(set {HOSTNAME_KEY}= to skip the check, or connect by a name it has)")
    if exc.verify_code not in _UNTRUSTED or broker is None:
        return f"the broker's certificate at {server} is refused: {exc.verify_message}"
    issued = f"the broker's certificate at {server} is issued by '{broker.issuer.rfc4514_string()}'"
    trusted = ", ".join(f"'{subject}'" for subject in _issuers(security.ca_file, security.ca_pem, leaf=False))
    if security.ca_file is None and security.ca_pem is None:
        return f"{issued}, which is not among the system's CAs; set ssl.truststore.location to the cluster's CA file"
    where = f"ssl.truststore.location {security.ca_file}" if security.ca_file else "ssl.truststore.certificates"
    return f"{issued} but {where} trusts {trusted}; use the cluster's CA file"


def _sasl_problem(security: ClientSecurity, server: Server, said: list[str], timeout_s: float) -> str | None:
    """A refused login in librdkafka's words (an error it always reports); the rest asked of the listener itself:
    whether it takes SASL, and which mechanisms."""
    if security.uses_sasl and login_refused(said):
        user = f" for user '{security.username}'" if security.username else ""
        return (f"authentication failed{user} with {security.mechanism} (the broker at {server} refused the "
                "password in sasl.jaas.config)")
    answer = ask_sasl(*server, _trusting(None) if security.uses_tls else None, security.mechanism or "PLAIN",
                      timeout_s)
    if answer is None:
        return None
    if security.uses_sasl and not answer.takes_sasl:
        return (f"{server} does not take SASL but security.protocol={security.protocol}; set security.protocol="
                f"{security.protocol.removeprefix('SASL_')}, or use the cluster's SASL listener")
    if security.uses_sasl and security.mechanism not in answer.mechanisms:
        return (f"{server} does not offer sasl.mechanism={security.mechanism} (it offers "
                f"{', '.join(answer.mechanisms)}); set sasl.mechanism to one of them")
    if not security.uses_sasl and answer.takes_sasl:
        wanted = "SASL_SSL" if security.uses_tls else "SASL_PLAINTEXT"
        return (f"{server} is a SASL listener (it offers {', '.join(answer.mechanisms)}) but security.protocol="
                f"{security.protocol}; set security.protocol={wanted} with sasl.mechanism and sasl.jaas.config")
    return None


# ---- librdkafka's words (pure; the texts librdkafka 2.16 writes) ---------------------------------------------
def login_refused(said: list[str]) -> bool:
    return any("SASL authentication error" in text for text in said)


def client_certificate_refused(said: list[str]) -> bool:
    """The broker's TLS alert "bad certificate" (42) or "certificate required" (116), as librdkafka reports it."""
    return any("alert bad certificate" in text or "certificate required" in text for text in said)


def last_error(said: list[str]) -> str:
    """The last thing said that is a cause, not the "brokers are down" summary that follows every cause."""
    causes = [text for text in said if "brokers are down" not in text]
    return (causes or said or ["no answer"])[-1]


def advertised_broker(text: str) -> Server | None:
    """The broker a librdkafka text is about when the metadata named it (`ssl://host:port/1: ...`), not the
    bootstrap server (`.../bootstrap: ...`)."""
    match = _BROKER.search(text)
    return Server(match["host"].strip("[]"), int(match["port"])) if match else None


def cleaned(text: str) -> str:
    """librdkafka's text without its log prefix, broker name and timing, on one line, secrets scrubbed."""
    return scrub_text(_SUFFIX.sub("", _PREFIX.sub("", " ".join(text.split()))))


# ---- our own TLS handshakes, each bounded by the socket's timeout --------------------------------------------
def _handshake(server: Server, context: ssl.SSLContext, timeout_s: float) -> bytes | None:
    with socket.create_connection(server, timeout=timeout_s) as raw:
        with context.wrap_socket(raw, server_hostname=server.host) as tls:
            return tls.getpeercert(binary_form=True)


def _trusting(security: ClientSecurity | None) -> ssl.SSLContext:
    """What librdkafka trusts: the PEM truststore, else the system's CAs; nothing checked without `security`, or
    for a PKCS12 truststore Python cannot read (the handshake then only tells whether the port speaks TLS)."""
    if security is None or security.truststore_file is not None:
        return unverified_tls()
    context = ssl.create_default_context(cafile=security.ca_file, cadata=security.ca_pem)
    context.check_hostname = security.verify_hostname
    return context


def _peer_certificate(server: Server, timeout_s: float) -> x509.Certificate | None:
    try:
        return x509.load_der_x509_certificate(_handshake(server, _trusting(None), timeout_s))
    except (OSError, TypeError, ValueError):  # gone, or no certificate: the message says less
        return None


def _names(certificate: x509.Certificate) -> str:
    """The names a host name is checked against: the SANs (OpenSSL ignores the CN when there are any)."""
    try:
        names = certificate.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    except x509.ExtensionNotFound:
        return f"no host name (subject {certificate.subject.rfc4514_string()})"
    return ", ".join(str(name.value) for name in names)


def _issuers(path: str | None, pem: str | None, leaf: bool = True) -> list[str]:
    """The issuer of the first certificate in a PEM file or text (a keystore's leaf), or the subjects of all (a
    truststore's CAs); empty when unreadable, and the message leaves it out."""
    try:
        certificates = x509.load_pem_x509_certificates(Path(path).read_bytes() if path else (pem or "").encode())
    except (OSError, ValueError):
        return []
    return [certificates[0].issuer.rfc4514_string()] if leaf else [c.subject.rfc4514_string() for c in certificates]

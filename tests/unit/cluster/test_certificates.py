import ipaddress
import re
import socket
import ssl
import stat
import threading
from contextlib import contextmanager

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import serialization
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from kafkabench.cluster.certificates import (
    certificate_subject,
    issue_certificates,
    issue_client_certificate,
    issuer_subject,
    subject_alternative_names,
)
from kafkabench.errors import ClusterError

TIMEOUT_S = 5.0
PEM_BLOCK = re.compile(rb"-----BEGIN ([A-Z ]+)-----.*?-----END \1-----\n", re.DOTALL)


@pytest.fixture(scope="module")
def certs(tmp_path_factory):
    return issue_certificates(tmp_path_factory.mktemp("certs") / "tls")


def pem_blocks(path):
    return [(m.group(1).decode(), m.group(0)) for m in PEM_BLOCK.finditer(path.read_bytes())]


def load_certs(path):
    return [x509.load_pem_x509_certificate(block) for kind, block in pem_blocks(path) if kind == "CERTIFICATE"]


def mode(path):
    return stat.S_IMODE(path.stat().st_mode)


def test_files_are_written_with_their_names(certs):
    names = sorted(p.name for p in certs.directory.iterdir())
    assert names == sorted([
        "ca.pem", "ca-key.pem", "broker.pem", "broker-key.pem", "broker-keystore.pem",
        "client.pem", "client-key.pem", "client-keystore.pem",
    ])
    assert certs.ca == certs.directory / "ca.pem"
    assert (certs.broker.certificate, certs.broker.key, certs.broker.keystore) == (
        certs.directory / "broker.pem", certs.directory / "broker-key.pem", certs.directory / "broker-keystore.pem")


def test_secrets_are_private(certs):
    assert mode(certs.directory) == 0o700
    for path in (certs.ca_key, certs.broker.key, certs.broker.keystore, certs.client.key, certs.client.keystore):
        assert mode(path) == 0o600, path
    assert not mode(certs.ca) & 0o022  # public, but never writable by others


def test_broker_sans_are_exactly_the_hosts(certs):
    assert subject_alternative_names(certs.broker.certificate) == ["localhost", "127.0.0.1"]
    san = load_certs(certs.broker.certificate)[0].extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert san.get_values_for_type(x509.DNSName) == ["localhost"]
    assert san.get_values_for_type(x509.IPAddress) == [ipaddress.ip_address("127.0.0.1")]


def test_custom_hosts_including_ipv6(tmp_path):
    certs = issue_certificates(tmp_path / "tls", hosts=("kafka-0.internal", "::1", "10.0.0.7", "kafka-0.internal"))
    assert subject_alternative_names(certs.broker.certificate) == ["kafka-0.internal", "::1", "10.0.0.7"]
    assert subject_alternative_names(certs.client.certificate) == []


@pytest.mark.parametrize(("hosts", "days", "message"), [
    ((), 30, "at least one host"),
    (("bad host",), 30, "neither an IP address nor"),
    (("localhost",), 0, "at least 1 day"),
])
def test_bad_arguments_are_refused(tmp_path, hosts, days, message):
    with pytest.raises(ClusterError, match=message):
        issue_certificates(tmp_path / "tls", hosts=hosts, valid_days=days)


def test_chains_verify_against_the_ca(certs):
    ca = load_certs(certs.ca)[0]
    ca.verify_directly_issued_by(ca)
    assert ca.extensions.get_extension_for_class(x509.BasicConstraints).value.ca
    for pair in (certs.broker, certs.client):
        leaf, chain_ca = load_certs(pair.certificate)
        assert chain_ca == ca
        leaf.verify_directly_issued_by(ca)
        assert not leaf.extensions.get_extension_for_class(x509.BasicConstraints).value.ca
        usages = leaf.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value
        assert ExtendedKeyUsageOID.CLIENT_AUTH in usages and ExtendedKeyUsageOID.SERVER_AUTH in usages


def test_subjects(certs):
    ca_subject = certificate_subject(certs.ca)
    assert re.fullmatch(r"CN=kafkabench CA [0-9a-f]{8}", ca_subject)
    assert issuer_subject(certs.ca) == ca_subject
    assert certificate_subject(certs.client.certificate) == "CN=kafkabench-client"
    assert issuer_subject(certs.client.certificate) == ca_subject
    assert issuer_subject(certs.broker.certificate) == ca_subject


def test_unreadable_certificate_is_a_cluster_error(tmp_path):
    with pytest.raises(ClusterError, match="cannot read a PEM certificate"):
        certificate_subject(tmp_path / "missing.pem")
    (tmp_path / "junk.pem").write_text("not a certificate")
    with pytest.raises(ClusterError, match="cannot read a PEM certificate"):
        subject_alternative_names(tmp_path / "junk.pem")


@pytest.mark.parametrize("pair", ["broker", "client"])
def test_keystore_is_unencrypted_pkcs8_key_then_leaf_then_ca(certs, pair):
    keypair = getattr(certs, pair)
    blocks = pem_blocks(keypair.keystore)
    assert [kind for kind, _ in blocks] == ["PRIVATE KEY", "CERTIFICATE", "CERTIFICATE"]
    key = serialization.load_pem_private_key(blocks[0][1], password=None)
    leaf, ca = (x509.load_pem_x509_certificate(block) for _, block in blocks[1:])
    assert leaf.public_key().public_numbers() == key.public_key().public_numbers()
    assert ca == load_certs(certs.ca)[0]
    assert keypair.key.read_bytes() == blocks[0][1]
    assert pem_blocks(keypair.key)[0][0] == "PRIVATE KEY"


def test_each_call_makes_a_new_ca(tmp_path):
    first = issue_certificates(tmp_path / "a")
    second = issue_certificates(tmp_path / "b")
    assert certificate_subject(first.ca) != certificate_subject(second.ca)
    assert first.ca.read_bytes() != second.ca.read_bytes()
    with pytest.raises(Exception):
        load_certs(first.broker.certificate)[0].verify_directly_issued_by(load_certs(second.ca)[0])


def test_reissuing_into_the_same_directory_replaces_the_set(tmp_path):
    first_ca = issue_certificates(tmp_path / "tls").ca.read_bytes()
    again = issue_certificates(tmp_path / "tls")
    assert again.ca.read_bytes() != first_ca
    assert not list(again.directory.glob("*.tmp")) and not list(again.directory.glob(".*"))


def test_another_client_is_signed_by_the_same_ca(tmp_path):
    certs = issue_certificates(tmp_path / "tls")
    alice = issue_client_certificate(certs, "alice.ops_1")
    assert alice.certificate == certs.directory / "alice.ops_1.pem"
    assert alice.key == certs.directory / "alice.ops_1-key.pem"
    assert alice.keystore == certs.directory / "alice.ops_1-keystore.pem"
    assert mode(alice.key) == 0o600 and mode(alice.keystore) == 0o600
    leaf = load_certs(alice.certificate)[0]
    leaf.verify_directly_issued_by(load_certs(certs.ca)[0])
    assert leaf.subject.get_attributes_for_oid(NameOID.COMMON_NAME)[0].value == "alice.ops_1"
    assert issuer_subject(alice.certificate) == certificate_subject(certs.ca)


@pytest.mark.parametrize("name", ["../x", "a/b", "", "with space", "ca", "broker", "client", "alice-key", "bob-keystore"])
def test_bad_client_names_are_refused(certs, name):
    with pytest.raises(ClusterError, match="is not allowed"):
        issue_client_certificate(certs, name)


def test_client_without_its_ca_key_is_a_cluster_error(tmp_path):
    certs = issue_certificates(tmp_path / "tls")
    certs.ca_key.unlink()
    with pytest.raises(ClusterError, match="cannot load the CA"):
        issue_client_certificate(certs, "alice")


def test_python_ssl_loads_the_files(certs):
    ctx = ssl.create_default_context(cafile=certs.ca)
    ctx.load_cert_chain(certs.client.certificate, certs.client.key)
    ctx.load_cert_chain(certs.client.keystore)  # the key is taken from the same file
    server = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server.load_cert_chain(certs.broker.keystore)
    server.load_verify_locations(cafile=certs.ca)


# --- a real TLS handshake over loopback, no Kafka -------------------------------------------------------------


@contextmanager
def tls_server(certs, connections):
    """A mTLS server on 127.0.0.1 that serves `connections` handshakes; yields its port and the outcomes."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(certs.broker.certificate, certs.broker.key)
    ctx.load_verify_locations(cafile=certs.ca)
    ctx.verify_mode = ssl.CERT_REQUIRED
    outcomes = []
    with socket.create_server(("127.0.0.1", 0)) as listener:
        listener.settimeout(TIMEOUT_S)

        def serve():
            for _ in range(connections):
                try:
                    conn, _ = listener.accept()
                    conn.settimeout(TIMEOUT_S)
                    with ctx.wrap_socket(conn, server_side=True) as tls:
                        subject = dict(item[0] for item in tls.getpeercert()["subject"])
                        tls.sendall(b"ok")
                        outcomes.append(subject["commonName"])
                except (OSError, KeyError) as exc:
                    outcomes.append(exc)

        thread = threading.Thread(target=serve, daemon=True)
        thread.start()
        try:
            yield listener.getsockname()[1], outcomes
        finally:
            thread.join(timeout=3 * TIMEOUT_S)
    assert not thread.is_alive(), "the TLS server thread did not finish"


def connect(port, ctx, server_hostname):
    with socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT_S) as sock:
        with ctx.wrap_socket(sock, server_hostname=server_hostname) as tls:
            return tls.recv(2)  # the server's "ok": its side of the handshake, client cert included, passed


def client_context(ca, keypair):
    ctx = ssl.create_default_context(cafile=ca)
    ctx.load_cert_chain(keypair.certificate, keypair.key)
    return ctx


def test_mtls_handshake_by_host_name_and_by_ip(certs):
    ctx = client_context(certs.ca, certs.client)
    with tls_server(certs, connections=2) as (port, outcomes):
        assert connect(port, ctx, "localhost") == b"ok"
        assert connect(port, ctx, "127.0.0.1") == b"ok"
    assert outcomes == ["kafkabench-client", "kafkabench-client"]


def test_mtls_handshake_with_an_extra_client_and_its_keystore(tmp_path):
    certs = issue_certificates(tmp_path / "tls")
    alice = issue_client_certificate(certs, "alice")
    ctx = ssl.create_default_context(cafile=certs.ca)
    ctx.load_cert_chain(alice.keystore)
    with tls_server(certs, connections=1) as (port, outcomes):
        assert connect(port, ctx, "localhost") == b"ok"
    assert outcomes == ["alice"]


def test_a_client_trusting_another_ca_fails(certs, tmp_path):
    other = issue_certificates(tmp_path / "other")
    ctx = client_context(other.ca, other.client)
    with tls_server(certs, connections=1) as (port, outcomes):
        with pytest.raises(ssl.SSLCertVerificationError):
            connect(port, ctx, "localhost")
    assert isinstance(outcomes[0], OSError)


def test_a_host_name_outside_the_sans_fails(certs):
    ctx = client_context(certs.ca, certs.client)
    with tls_server(certs, connections=1) as (port, outcomes):
        with pytest.raises(ssl.SSLCertVerificationError, match="Hostname mismatch|doesn't match"):
            connect(port, ctx, "kafka.example.com")
    assert isinstance(outcomes[0], OSError)


def test_a_client_certificate_from_another_ca_is_refused_by_the_server(certs, tmp_path):
    other = issue_certificates(tmp_path / "other")
    ctx = client_context(certs.ca, other.client)  # trusts the broker, but presents a foreign client cert
    with tls_server(certs, connections=1) as (port, outcomes):
        with pytest.raises((ssl.SSLError, OSError)):
            connect(port, ctx, "localhost")
    assert isinstance(outcomes[0], ssl.SSLError)

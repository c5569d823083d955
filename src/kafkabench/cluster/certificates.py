"""A throw-away CA, broker and client certificates for TLS and mTLS listeners, as PEM files.

PEM is the one format every client reads: the Java broker and client (`ssl.keystore.type=PEM`, whose
keystore is one file holding an unencrypted PKCS#8 key then the chain), librdkafka (`ssl.ca.location`,
`ssl.certificate.location`, `ssl.key.location`) and Python's ssl module (kafka-python, aiokafka). Keys
are RSA 2048, which every TLS stack accepts for server and client authentication. A fresh set is issued
on every call, so a run never picks up a stale or foreign CA.
"""

from __future__ import annotations

import contextlib
import datetime
import ipaddress
import os
import re
import secrets
import tempfile
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from kafkabench.errors import ClusterError

CA_FILE = "ca.pem"
CA_KEY_FILE = "ca-key.pem"
CLIENT_CN = "kafkabench-client"
BROKER_CN = "kafkabench-broker"
_NAME = re.compile(r"[A-Za-z0-9._-]+")
_RESERVED = {"ca", "broker", "client"}  # the set's own files; a user named so would overwrite them
_CLOCK_SLACK = datetime.timedelta(days=1)  # a peer whose clock is a little behind still accepts the certificates


@dataclass(frozen=True)
class KeyPair:
    name: str  # "broker", "client" or a user's name
    certificate: Path  # leaf then CA certificate, PEM
    key: Path  # unencrypted PKCS#8 private key, PEM, mode 0o600
    keystore: Path  # key then chain in one PEM file (Java's PEM keystore), mode 0o600


@dataclass(frozen=True)
class Certificates:
    directory: Path
    ca: Path  # the CA certificate: the truststore of brokers and clients
    broker: KeyPair
    client: KeyPair

    @property
    def ca_key(self) -> Path:
        return self.directory / CA_KEY_FILE


def issue_certificates(
    directory: Path, hosts: tuple[str, ...] = ("localhost", "127.0.0.1"), valid_days: int = 30
) -> Certificates:
    """A new CA in `directory` (mode 0o700), a broker certificate naming every host, and a client certificate."""
    if not hosts:
        raise ClusterError("a broker certificate needs at least one host name or IP address")
    if valid_days < 1:
        raise ClusterError(f"certificates must be valid for at least 1 day, not {valid_days}")
    sans = [_san(host) for host in dict.fromkeys(hosts)]
    try:
        directory.mkdir(parents=True, exist_ok=True)
        os.chmod(directory, 0o700)
        ca_cert, ca_key = _issue_ca(valid_days)
        _write(directory / CA_KEY_FILE, _key_pem(ca_key), private=True)
        _write(directory / CA_FILE, _cert_pem(ca_cert), private=False)
        broker = _issue_pair(directory, "broker", BROKER_CN, ca_cert, ca_key, sans, valid_days)
        client = _issue_pair(directory, "client", CLIENT_CN, ca_cert, ca_key, [], valid_days)
    except OSError as exc:
        raise ClusterError(f"could not write certificates to {directory}: {exc.strerror or exc}") from exc
    return Certificates(directory=directory, ca=directory / CA_FILE, broker=broker, client=client)


def issue_client_certificate(certificates: Certificates, name: str, valid_days: int = 30) -> KeyPair:
    """Another client certificate (CN = `name`) signed by the set's CA: files {name}.pem, -key.pem, -keystore.pem."""
    if not _NAME.fullmatch(name) or name in _RESERVED or name.endswith(("-key", "-keystore")):
        raise ClusterError(
            f"client certificate name {name!r} is not allowed: use letters, digits, '.', '_' and '-', "
            "not 'ca', 'broker' or 'client', and no '-key' or '-keystore' ending"
        )
    try:
        ca_key = serialization.load_pem_private_key(certificates.ca_key.read_bytes(), password=None)
        ca_cert = x509.load_pem_x509_certificate(certificates.ca.read_bytes())
    except (OSError, ValueError) as exc:
        raise ClusterError(f"cannot load the CA from {certificates.directory} ({exc}); issue the certificates again") from exc
    if not isinstance(ca_key, rsa.RSAPrivateKey):
        raise ClusterError(f"{certificates.ca_key} is not an RSA key; issue the certificates again")
    try:
        return _issue_pair(certificates.directory, name, name, ca_cert, ca_key, [], valid_days)
    except OSError as exc:
        raise ClusterError(f"could not write {name}'s certificate to {certificates.directory}: {exc.strerror or exc}") from exc


def subject_alternative_names(certificate: Path) -> list[str]:
    """The leaf's SANs as text ("localhost", "127.0.0.1"), for host name mismatch messages."""
    try:
        ext = _leaf(certificate).extensions.get_extension_for_class(x509.SubjectAlternativeName)
    except x509.ExtensionNotFound:
        return []
    return [str(name.value) for name in ext.value]


def certificate_subject(certificate: Path) -> str:
    """The leaf's subject as RFC 4514 text, e.g. "CN=kafkabench CA 1a2b3c4d"."""
    return _leaf(certificate).subject.rfc4514_string()


def issuer_subject(certificate: Path) -> str:
    """The leaf's issuer as RFC 4514 text: which CA signed it, for "expected CA X" messages."""
    return _leaf(certificate).issuer.rfc4514_string()


def _leaf(certificate: Path) -> x509.Certificate:
    """The first certificate of a PEM file (a chain file starts with its leaf)."""
    try:
        return x509.load_pem_x509_certificates(certificate.read_bytes())[0]
    except (OSError, ValueError) as exc:
        raise ClusterError(f"cannot read a PEM certificate from {certificate}: {exc}") from exc


def _san(host: str) -> x509.GeneralName:
    with contextlib.suppress(ValueError):
        return x509.IPAddress(ipaddress.ip_address(host.strip("[]")))
    if not host or not host.isascii() or any(c.isspace() for c in host):
        raise ClusterError(f"{host!r} is neither an IP address nor an ASCII host name")
    return x509.DNSName(host)


def _issue_ca(valid_days: int) -> tuple[x509.Certificate, rsa.RSAPrivateKey]:
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    name = _cn(f"kafkabench CA {secrets.token_hex(4)}")  # two clusters' CAs differ, and messages can say which
    builder = (
        _builder(name, name, key.public_key(), valid_days)
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(_key_usage(signing=True), critical=True)
    )
    return builder.sign(key, hashes.SHA256()), key


def _issue_pair(
    directory: Path, name: str, common_name: str, ca_cert: x509.Certificate, ca_key: rsa.RSAPrivateKey,
    sans: list[x509.GeneralName], valid_days: int,
) -> KeyPair:
    """A leaf for both server and client auth (brokers are clients of each other on the same listener)."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    ca_ski = ca_cert.extensions.get_extension_for_class(x509.SubjectKeyIdentifier).value
    builder = (
        _builder(_cn(common_name), ca_cert.subject, key.public_key(), valid_days)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(_key_usage(signing=False), critical=True)
        .add_extension(
            x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH, ExtendedKeyUsageOID.CLIENT_AUTH]), critical=False
        )
        .add_extension(x509.AuthorityKeyIdentifier.from_issuer_subject_key_identifier(ca_ski), critical=False)
    )
    if sans:
        builder = builder.add_extension(x509.SubjectAlternativeName(sans), critical=False)
    chain = _cert_pem(builder.sign(ca_key, hashes.SHA256())) + _cert_pem(ca_cert)
    pair = KeyPair(name, directory / f"{name}.pem", directory / f"{name}-key.pem", directory / f"{name}-keystore.pem")
    _write(pair.key, _key_pem(key), private=True)
    _write(pair.keystore, _key_pem(key) + chain, private=True)
    _write(pair.certificate, chain, private=False)
    return pair


def _builder(subject: x509.Name, issuer: x509.Name, public_key: rsa.RSAPublicKey, valid_days: int) -> x509.CertificateBuilder:
    now = datetime.datetime.now(datetime.timezone.utc)
    return (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(issuer)
        .public_key(public_key)
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - _CLOCK_SLACK)
        .not_valid_after(now + datetime.timedelta(days=valid_days))
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(public_key), critical=False)
    )


def _key_usage(signing: bool) -> x509.KeyUsage:
    """The CA signs certificates and CRLs; a leaf signs handshakes and (RSA key exchange) enciphers keys."""
    leaf = not signing
    return x509.KeyUsage(
        digital_signature=leaf, content_commitment=False, key_encipherment=leaf, data_encipherment=False,
        key_agreement=False, key_cert_sign=signing, crl_sign=signing, encipher_only=False, decipher_only=False,
    )


def _cn(common_name: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


def _cert_pem(cert: x509.Certificate) -> bytes:
    return cert.public_bytes(serialization.Encoding.PEM)


def _key_pem(key: rsa.RSAPrivateKey) -> bytes:
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())


def _write(path: Path, data: bytes, private: bool) -> None:
    """Write via a temporary file (created 0o600 by mkstemp) and rename: readers never see half a file or a wide mode."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
        if not private:
            os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise

"""A throwaway CA with a broker and a client certificate, written as PEM (and PKCS12) files: what the security
tests need to see real files read by each client's TLS code. EC keys: made in milliseconds."""

from __future__ import annotations

import datetime
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.serialization import pkcs12
from cryptography.x509.oid import NameOID

KEY_PASSWORD = "k3y-pass"
STORE_PASSWORD = "st0re-pass"
BROKER_HOST = "broker.kafkabench.test"


@dataclass(frozen=True)
class Pki:
    ca: Path  # the CA certificate
    broker: Path  # broker key + certificate (PKCS#8, unencrypted)
    client: Path  # client key + certificate chain (PKCS#8, unencrypted)
    client_encrypted: Path  # the same, key encrypted with KEY_PASSWORD
    client_traditional: Path  # the key in OpenSSL's traditional form (BEGIN EC PRIVATE KEY)
    client_p12: Path  # PKCS12 keystore, STORE_PASSWORD
    truststore_jks: Path  # a JKS magic number and nothing else: only its first bytes are ever read here
    ca_pem: str
    client_key_pem: str
    client_chain_pem: str


def _name(common_name: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


def _certificate(subject: str, key, issuer: str, issuer_key, *, ca: bool, host: str | None = None) -> x509.Certificate:
    now = datetime.datetime.now(datetime.timezone.utc)
    builder = (x509.CertificateBuilder().subject_name(_name(subject)).issuer_name(_name(issuer))
               .public_key(key.public_key()).serial_number(x509.random_serial_number())
               .not_valid_before(now - datetime.timedelta(minutes=5)).not_valid_after(now + datetime.timedelta(days=1))
               .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True))
    if host is not None:
        builder = builder.add_extension(x509.SubjectAlternativeName([x509.DNSName(host)]), critical=False)
    return builder.sign(issuer_key, hashes.SHA256())


def _pem(certificate: x509.Certificate) -> str:
    return certificate.public_bytes(serialization.Encoding.PEM).decode()


def _key(key, encryption=serialization.NoEncryption(), form=serialization.PrivateFormat.PKCS8) -> str:
    return key.private_bytes(serialization.Encoding.PEM, form, encryption).decode()


def make_pki(directory: Path) -> Pki:
    ca_key, broker_key, client_key = (ec.generate_private_key(ec.SECP256R1()) for _ in range(3))
    ca = _certificate("kafkabench test CA", ca_key, "kafkabench test CA", ca_key, ca=True)
    broker = _certificate(BROKER_HOST, broker_key, "kafkabench test CA", ca_key, ca=False, host=BROKER_HOST)
    client = _certificate("bench", client_key, "kafkabench test CA", ca_key, ca=False)
    chain = _pem(client) + _pem(ca)
    files = {
        "ca": _pem(ca),
        "broker": _key(broker_key) + _pem(broker) + _pem(ca),
        "client": _key(client_key) + chain,
        "client_encrypted": _key(client_key, serialization.BestAvailableEncryption(KEY_PASSWORD.encode())) + chain,
        "client_traditional": _key(client_key, form=serialization.PrivateFormat.TraditionalOpenSSL) + chain,
    }
    paths = {name: directory / f"{name}.pem" for name in files}
    for name, text in files.items():
        paths[name].write_text(text)
    p12 = directory / "client.p12"
    p12.write_bytes(pkcs12.serialize_key_and_certificates(
        b"client", client_key, client, [ca], serialization.BestAvailableEncryption(STORE_PASSWORD.encode())))
    jks = directory / "truststore.jks"
    jks.write_bytes(b"\xfe\xed\xfe\xed\x00\x00\x00\x02")
    return Pki(paths["ca"], paths["broker"], paths["client"], paths["client_encrypted"], paths["client_traditional"],
               p12, jks, _pem(ca), _key(client_key), chain)

"""The aiokafka adapter turns the reserved ssl_* keys into the SSLContext aiokafka takes; the context is tried in
a real TLS handshake against a throwaway broker certificate, over a socket pair (no network, no broker)."""

import socket
import ssl
import threading

import pytest

from kafkabench.config.translate import translate
from kafkabench.workers.adapters import aiokafka as adapter
from kafkabench.workers.adapters.base import AdapterError
from tests.unit.pki import BROKER_HOST, KEY_PASSWORD, make_pki


@pytest.fixture(scope="module")
def pki(tmp_path_factory):
    return make_pki(tmp_path_factory.mktemp("pki"))


def handshake(client_context: ssl.SSLContext, pki, host: str = BROKER_HOST) -> str:
    """Both sides of one TLS handshake: the broker requires a client certificate from the same CA; returns
    the client certificate's common name as the broker saw it."""
    server_context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH, cafile=str(pki.ca))
    server_context.load_cert_chain(str(pki.broker))
    server_context.verify_mode = ssl.CERT_REQUIRED
    broker_end, client_end = socket.socketpair()
    seen: dict = {}

    def serve() -> None:
        try:
            with server_context.wrap_socket(broker_end, server_side=True) as tls:
                seen["peer"] = dict(item[0] for item in tls.getpeercert()["subject"])["commonName"]
        except (ssl.SSLError, OSError) as exc:
            seen["error"] = exc

    broker = threading.Thread(target=serve)
    broker.start()
    try:
        with client_context.wrap_socket(client_end, server_hostname=host):
            pass
    finally:
        client_end.close()
        broker.join(10)
    return seen.get("peer", "")


def mtls(pki, **extra) -> dict:
    settings = {"security.protocol": "SSL", "ssl.truststore.location": str(pki.ca),
                "ssl.keystore.location": str(pki.client_encrypted), "ssl.key.password": KEY_PASSWORD, **extra}
    return translate("aiokafka", "producer", settings).config


def test_the_reserved_keys_become_an_ssl_context_for_mtls(pki):
    keywords = adapter.with_ssl_context(mtls(pki))
    assert not set(keywords) & set(adapter.AIOKAFKA_SSL_KEYS)
    context = keywords["ssl_context"]
    assert context.check_hostname and context.verify_mode == ssl.CERT_REQUIRED
    assert handshake(context, pki) == "bench"


def test_host_name_checking_off_still_checks_the_chain(pki):
    context = adapter.with_ssl_context(mtls(pki, **{"ssl.endpoint.identification.algorithm": ""}))["ssl_context"]
    assert not context.check_hostname and context.verify_mode == ssl.CERT_REQUIRED
    assert handshake(context, pki, host="elsewhere.test") == "bench"
    checking = adapter.with_ssl_context(mtls(pki))["ssl_context"]
    with pytest.raises(ssl.SSLCertVerificationError):
        handshake(checking, pki, host="elsewhere.test")


def test_inline_ca_certificates_arrive_as_cadata(pki):
    config = translate("aiokafka", "consumer", {"security.protocol": "SASL_SSL", "sasl.mechanism": "PLAIN",
                                                "sasl.jaas.config": 'x.PlainLoginModule required username="u" password="p";',
                                                "ssl.truststore.certificates": pki.ca_pem}).config
    context = adapter.with_ssl_context(config)["ssl_context"]
    assert [dict(item[0] for item in ca["subject"])["commonName"] for ca in context.get_ca_certs()] == ["kafkabench test CA"]


def test_plaintext_gets_no_context_and_no_reserved_keys():
    assert adapter.with_ssl_context({"security_protocol": "PLAINTEXT", "ssl_check_hostname": True, "acks": 1}) == \
        {"security_protocol": "PLAINTEXT", "acks": 1}


def test_a_key_that_does_not_open_is_an_adapter_error_without_the_password(pki):
    config = {"security_protocol": "SSL", "ssl_certfile": str(pki.client_encrypted),
              "ssl_keyfile": str(pki.client_encrypted), "ssl_password": "wrong-password"}
    with pytest.raises(AdapterError, match="cannot build aiokafka's SSL context") as refused:
        adapter._keywords(config)
    assert "wrong-password" not in str(refused.value)
    with pytest.raises(AdapterError):  # no password at all: refused, never prompted for on the terminal
        adapter._keywords({**config, "ssl_password": None})


def test_the_effective_config_shows_the_context_and_hides_the_secrets(pki):
    from aiokafka import AIOKafkaProducer

    config = mtls(pki)
    effective = adapter.with_defaults(AIOKafkaProducer, config, adapter.with_ssl_context(config))
    assert effective["ssl_context"] == "SSLContext(check_hostname=True, verify_mode=CERT_REQUIRED)"
    assert effective["ssl_password"] == "<redacted>" and effective["ssl_cafile"] == str(pki.ca)
    assert KEY_PASSWORD not in repr(effective)

"""A `ClientSecurity` written out in each client's own settings (see `security` for why).

Only what the protocol uses is written: TLS settings for SSL and SASL_SSL, SASL ones for SASL_*; the Java
client ignores the rest, and so does every client here. A client that cannot do what the settings ask is
refused by name; the mechanisms each supports are read from the library where it keeps a list.
"""

from __future__ import annotations

import importlib.util
import os
from dataclasses import dataclass, field
from functools import cache
from typing import Any, Callable, Collection

from kafkabench.config import librdkafka
from kafkabench.config.security import USERNAME_MECHANISMS, ClientSecurity, is_security_key
from kafkabench.errors import ConfigError

# not aiokafka keywords: aiokafka takes one SSLContext object, which a JSON task cannot carry, so its adapter
# builds the context from these (kafka-python's names for the same things) and hands that over instead
AIOKAFKA_SSL_KEYS = ("ssl_cafile", "ssl_cadata", "ssl_certfile", "ssl_keyfile", "ssl_password", "ssl_check_hostname")

# aiokafka checks the mechanism inside AIOKafkaClient.__init__ and keeps no list to read
AIOKAFKA_MECHANISMS = frozenset({"PLAIN", "GSSAPI", "SCRAM-SHA-256", "SCRAM-SHA-512", "OAUTHBEARER"})

# librdkafka's builtin.features -> the mechanisms each brings (sasl_win32 is GSSAPI through SSPI)
_LIBRDKAFKA_FEATURES = {"sasl_plain": ("PLAIN",), "sasl_scram": ("SCRAM-SHA-256", "SCRAM-SHA-512"),
                        "sasl_gssapi": ("GSSAPI",), "sasl_win32": ("GSSAPI",), "sasl_oauthbearer": ("OAUTHBEARER",)}

# what a Python client's mechanism needs installed besides the client
_PYTHON_NEEDS = {"GSSAPI": "gssapi", "AWS_MSK_IAM": "botocore"}

# other Java ssl.* / sasl.* names the Python clients take under their own name
_PYTHON_EXTRAS = {"sasl.kerberos.service.name": "sasl_kerberos_service_name"}


@dataclass(frozen=True)
class SecurityTranslated:
    config: dict[str, Any] = field(default_factory=dict)
    not_applicable: list[str] = field(default_factory=list)
    origins: dict[str, str] = field(default_factory=dict)  # each key of `config` -> the Java name it comes from


def translate_security(client: str, settings: dict[str, str], native_names: Collection[str] = ()) -> SecurityTranslated:
    """The `security.is_security_key` settings in `client`'s form; `native_names` are the library's own names
    the client also gets (prefix stripped), which can supply what the Java names cannot say to it."""
    if not any(is_security_key(key) for key in settings):
        return SecurityTranslated()
    return TRANSLATORS[client](ClientSecurity.from_java(settings), native_names)


@dataclass
class _Out:
    config: dict[str, Any] = field(default_factory=dict)
    not_applicable: list[str] = field(default_factory=list)
    origins: dict[str, str] = field(default_factory=dict)

    def set(self, key: str, value: Any, origin: str) -> None:
        if value is not None:
            self.config[key], self.origins[key] = value, origin

    def done(self) -> SecurityTranslated:
        return SecurityTranslated(self.config, self.not_applicable, self.origins)


def _java(security: ClientSecurity, native_names: Collection[str]) -> SecurityTranslated:
    """As given; a PEM store without a declared type gets ssl.*.type=PEM, which Java would otherwise read as JKS."""
    return SecurityTranslated(dict(security.java), [], {key: key for key in security.java})


def _confluent(security: ClientSecurity, native_names: Collection[str]) -> SecurityTranslated:
    label, out = "confluent (librdkafka)", _Out()
    out.set("security.protocol", security.protocol, "security.protocol")
    if security.uses_sasl:
        _check_mechanism(label, security.mechanism, librdkafka_mechanisms())
        if security.mechanism == "OAUTHBEARER" and not any(name.startswith("sasl.oauthbearer.") for name in native_names):
            raise ConfigError(f"{label} cannot take sasl.mechanism=OAUTHBEARER's login from sasl.jaas.config; "
                              "give librdkafka's own settings too (librdkafka:sasl.oauthbearer.method=oidc, "
                              "librdkafka:sasl.oauthbearer.client.id, librdkafka:sasl.oauthbearer.client.secret)")
        out.set("sasl.mechanisms", security.mechanism, "sasl.mechanism")
        if security.mechanism in USERNAME_MECHANISMS:
            out.set("sasl.username", security.username, "sasl.jaas.config")
            out.set("sasl.password", security.password, "sasl.jaas.config")
    if security.uses_tls:
        _refuse_store(label, "truststore", security.truststore_type, security.truststore_file, "the Java client")
        out.set("ssl.ca.location", _absolute(security.ca_file), "ssl.truststore.location")
        out.set("ssl.ca.pem", security.ca_pem, "ssl.truststore.certificates")
        if security.keystore_file is not None:
            _refuse_store(label, "keystore", security.keystore_type, security.keystore_file, "the Java client",
                          readable="PKCS12")
            out.set("ssl.keystore.location", _absolute(security.keystore_file), "ssl.keystore.location")
            out.set("ssl.keystore.password", security.keystore_password, "ssl.keystore.password")
            if security.key_password not in (None, security.keystore_password):
                out.not_applicable.append("ssl.key.password")  # librdkafka opens the key with the store's password
        out.set("ssl.certificate.location", _absolute(security.cert_file), "ssl.keystore.location")
        out.set("ssl.key.location", _absolute(security.key_file), "ssl.keystore.location")
        out.set("ssl.certificate.pem", security.cert_chain_pem, "ssl.keystore.certificate.chain")
        out.set("ssl.key.pem", security.key_pem, "ssl.keystore.key")
        if security.key_file is not None or security.key_pem is not None:
            out.set("ssl.key.password", security.key_password, "ssl.key.password")
        out.set("ssl.endpoint.identification.algorithm", "https" if security.verify_hostname else "none",
                "ssl.endpoint.identification.algorithm")
    for key, value in security.extras.items():  # librdkafka shares many (sasl.kerberos.service.name); it judges
        out.set(key, value, key)
    return out.done()


def _python(client: str, security: ClientSecurity, mechanisms: frozenset[str]) -> _Out:
    """kafka-python's names; aiokafka's adapter takes the same for what it builds its SSLContext from."""
    out = _Out()
    out.set("security_protocol", security.protocol, "security.protocol")
    if security.uses_sasl:
        _check_mechanism(client, security.mechanism, mechanisms)
        if security.mechanism == "OAUTHBEARER":
            raise ConfigError(f"{client} cannot use sasl.mechanism=OAUTHBEARER from settings: it wants a token "
                              "provider object (sasl_oauth_token_provider), which no settings file can give")
        needed = _PYTHON_NEEDS.get(security.mechanism)
        if needed is not None and importlib.util.find_spec(needed) is None:
            raise ConfigError(f"{client} cannot use sasl.mechanism={security.mechanism}: "
                              f"the {needed} package is not installed")
        out.set("sasl_mechanism", security.mechanism, "sasl.mechanism")
        if security.mechanism in USERNAME_MECHANISMS:
            out.set("sasl_plain_username", security.username, "sasl.jaas.config")
            out.set("sasl_plain_password", security.password, "sasl.jaas.config")
    if security.uses_tls:
        _refuse_store(client, "truststore", security.truststore_type, security.truststore_file, "the Java client")
        _refuse_store(client, "keystore", security.keystore_type, security.keystore_file,
                      "the Java client and confluent" if security.keystore_type == "PKCS12" else "the Java client")
        if security.key_pem is not None:
            raise ConfigError(f"{client} cannot take an inline private key (ssl.keystore.key): it reads key and "
                              "chain from a file; put both in one PEM file and give ssl.keystore.location")
        out.set("ssl_cafile", _absolute(security.ca_file), "ssl.truststore.location")
        out.set("ssl_certfile", _absolute(security.cert_file), "ssl.keystore.location")
        out.set("ssl_keyfile", _absolute(security.key_file), "ssl.keystore.location")
        if security.key_file is not None:
            out.set("ssl_password", security.key_password, "ssl.key.password")
        out.set("ssl_check_hostname", security.verify_hostname, "ssl.endpoint.identification.algorithm")
    for key, value in security.extras.items():
        if key in _PYTHON_EXTRAS:
            out.set(_PYTHON_EXTRAS[key], value, key)
        else:
            out.not_applicable.append(key)
    return out


def _kafka_python(security: ClientSecurity, native_names: Collection[str]) -> SecurityTranslated:
    if security.uses_tls and security.ca_pem is not None:
        raise ConfigError("kafka-python cannot take inline CA certificates (ssl.truststore.certificates): "
                          "it reads them from a file; give a PEM file with ssl.truststore.location")
    return _python("kafka-python", security, kafka_python_mechanisms()).done()


def _aiokafka(security: ClientSecurity, native_names: Collection[str]) -> SecurityTranslated:
    out = _python("aiokafka", security, AIOKAFKA_MECHANISMS)
    if security.uses_tls:
        out.set("ssl_cadata", security.ca_pem, "ssl.truststore.certificates")
    return out.done()


def _check_mechanism(client: str, mechanism: str, supported: frozenset[str]) -> None:
    if mechanism not in supported:
        raise ConfigError(f"{client} cannot use sasl.mechanism={mechanism} (it supports {', '.join(sorted(supported))})")


def _refuse_store(client: str, store: str, kind: str | None, location: str | None, readers: str,
                  readable: str | None = None) -> None:
    """A JKS or PKCS12 store: only the Java client reads both; librdkafka reads a PKCS12 keystore (`readable`)."""
    if location is not None and kind != readable:
        raise ConfigError(f"{client} cannot read a {kind} {store} (ssl.{store}.location={location}): only {readers} "
                          f"can; convert it to PEM and set ssl.{store}.type=PEM")


def _absolute(path: str | None) -> str | None:
    """The file that was looked at is the one the client opens, whatever directory its worker starts in."""
    return os.path.abspath(path) if path is not None else None


@cache
def librdkafka_mechanisms() -> frozenset[str]:
    features = librdkafka.conf_dump().get("builtin.features", "").split(",")
    return frozenset(m for feature in features for m in _LIBRDKAFKA_FEATURES.get(feature.strip(), ()))


@cache
def kafka_python_mechanisms() -> frozenset[str]:
    try:
        from kafka.net.sasl import SASL_MECHANISMS  # kafka-python 3
    except ImportError:
        from kafka.sasl import SASL_MECHANISMS  # kafka-python 2
    return frozenset(SASL_MECHANISMS)


TRANSLATORS: dict[str, Callable[[ClientSecurity, Collection[str]], SecurityTranslated]] = {
    "java": _java,
    "confluent": _confluent,
    "kafka-python": _kafka_python,
    "aiokafka": _aiokafka,
}

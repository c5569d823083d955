"""One Java-named security setup (`security.protocol`, `sasl.*`, `ssl.*`) for every client.

The Java names say what a connection needs (a protocol, SASL credentials inside `sasl.jaas.config`, a
truststore and a keystore); each client wants that said its own way: librdkafka as `sasl.username` and
`ssl.ca.location`, kafka-python as `sasl_plain_username` and `ssl_cafile`, aiokafka as an SSLContext object.
So the Java settings are read once into a `ClientSecurity` (files looked at, the JAAS text parsed) and that is
written out per client by `security_clients`. What a client cannot do (a JKS store outside Java, an inline key
for kafka-python, a mechanism it lacks) is a ConfigError naming the client and the setting, never a setting
quietly dropped; what the Java client itself would refuse is refused for every client, so a file that passes
here works for all of them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kafkabench.config import java_names, redact, security_files
from kafkabench.config.security_files import PEM
from kafkabench.config.security_jaas import parse_jaas
from kafkabench.errors import ConfigError

PROTOCOLS = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")
USERNAME_MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512")  # the JAAS text's username and password

SECURITY_KEYS = frozenset({
    "security.protocol", "sasl.mechanism", "sasl.jaas.config",
    "ssl.truststore.location", "ssl.truststore.type", "ssl.truststore.password", "ssl.truststore.certificates",
    "ssl.keystore.location", "ssl.keystore.type", "ssl.keystore.password", "ssl.keystore.key",
    "ssl.keystore.certificate.chain", "ssl.key.password", "ssl.endpoint.identification.algorithm",
})
HOSTNAME_KEY = "ssl.endpoint.identification.algorithm"


def is_security_key(key: str) -> bool:
    """A Java name this module translates, or another Java `ssl.*` / `sasl.*` name (see `ClientSecurity.extras`);
    a library's own form (`librdkafka:ssl.ca.location`) is not: it reaches its library as written."""
    return key in SECURITY_KEYS or key.startswith(("ssl.", "sasl."))


@dataclass(frozen=True)
class ClientSecurity:
    """The connection's security as the Java client would set it up. Secrets stay out of repr."""

    protocol: str = "PLAINTEXT"
    mechanism: str = "GSSAPI"  # Java's default; meaningful only for SASL_*
    login_module: str | None = None
    username: str | None = None
    password: str | None = field(default=None, repr=False)
    ca_file: str | None = None  # a PEM truststore file
    ca_pem: str | None = None  # ssl.truststore.certificates, normalised PEM
    truststore_type: str | None = None  # PEM, JKS, PKCS12: as declared, else as the file shows
    truststore_file: str | None = None  # a JKS or PKCS12 truststore
    truststore_password: str | None = field(default=None, repr=False)
    cert_file: str | None = None  # a PEM keystore holds key and chain: both name the same file
    key_file: str | None = None
    cert_chain_pem: str | None = None
    key_pem: str | None = field(default=None, repr=False)
    key_password: str | None = field(default=None, repr=False)
    keystore_type: str | None = None
    keystore_file: str | None = None  # a JKS or PKCS12 keystore
    keystore_password: str | None = field(default=None, repr=False)
    verify_hostname: bool = True
    java: dict[str, str] = field(default_factory=dict, repr=False)  # the Java settings as given, and implied types
    extras: dict[str, str] = field(default_factory=dict, repr=False)  # other ssl.* / sasl.* names, as given

    @property
    def uses_tls(self) -> bool:
        return self.protocol in ("SSL", "SASL_SSL")

    @property
    def uses_sasl(self) -> bool:
        return self.protocol.startswith("SASL_")

    @classmethod
    def from_java(cls, settings: dict[str, str]) -> ClientSecurity:
        """Parse and check; an empty value counts as not given, but for ssl.endpoint.identification.algorithm,
        where empty means off. Files are read now (see `security_files`)."""
        given = {key: value for key, value in settings.items() if is_security_key(key)}
        value = {key: text for key, text in given.items() if text != ""}.get
        protocol = (value("security.protocol") or _java_default("security.protocol")).upper()
        if protocol not in PROTOCOLS:
            raise ConfigError(f"security.protocol={given['security.protocol']}: expected one of {', '.join(PROTOCOLS)}")
        mechanism = value("sasl.mechanism") or _java_default("sasl.mechanism")
        fields: dict = dict(protocol=protocol, mechanism=mechanism, verify_hostname=_verify(given),
                            key_password=value("ssl.key.password"))
        fields.update(_credentials(protocol, mechanism, value("sasl.jaas.config")))
        implied: dict[str, str] = {}
        fields.update(_truststore(value, implied))
        fields.update(_keystore(value, implied, has_key_password=fields["key_password"] is not None))
        security = cls(**fields, java={**given, **implied},
                       extras={key: text for key, text in given.items() if key not in SECURITY_KEYS})
        redact.remember([security.password, security.key_password, security.truststore_password,
                         security.keystore_password, security.key_pem, value("sasl.jaas.config")])
        return security


def hostname_warning(settings: dict[str, str]) -> str | None:
    """One line to print when TLS is on but the broker's host name is not checked (Java: the algorithm empty)."""
    protocol = (settings.get("security.protocol") or "").upper()
    if protocol in ("SSL", "SASL_SSL") and settings.get(HOSTNAME_KEY, "https").strip() == "":
        return (f"{HOSTNAME_KEY} is empty: the broker's certificate is not checked against its host name; "
                "anyone with a certificate from this CA can pose as the broker")
    return None


def _java_default(key: str) -> str:
    return java_names.default("producer", key) or ""


def _verify(given: dict[str, str]) -> bool:
    algorithm = given.get(HOSTNAME_KEY, _java_default(HOSTNAME_KEY)).strip()
    if algorithm.lower() not in ("https", ""):
        raise ConfigError(f"{HOSTNAME_KEY}={algorithm}: expected https (check the host name) or empty (do not)")
    return algorithm != ""


def _credentials(protocol: str, mechanism: str, jaas: str | None) -> dict:
    """Username and password out of the JAAS text; parsed whatever the protocol, so a broken one is refused alike."""
    login = parse_jaas(jaas) if jaas is not None else None
    # no login at all may still be filled in: a cluster kafkabench runs gives its own (a profile names only the
    # mechanism); a cluster that gets none refuses the connection, and the pre-flight check says so
    if protocol.startswith("SASL_") and mechanism in USERNAME_MECHANISMS and login is not None:
        missing = [option for option in ("username", "password") if login.options.get(option) is None]
        if missing:
            raise ConfigError(f"sasl.jaas.config has no {' and no '.join(missing)} option; {mechanism} needs both")
    if login is None:
        return {}
    return dict(login_module=login.module, username=login.username, password=login.password)


def _truststore(value, implied: dict[str, str]) -> dict:
    location, certificates = value("ssl.truststore.location"), value("ssl.truststore.certificates")
    declared, password = (value("ssl.truststore.type") or "").upper() or None, value("ssl.truststore.password")
    if certificates is not None:
        _java_refuses(location is not None, "ssl.truststore.certificates and ssl.truststore.location are both set")
        _java_refuses(declared not in (None, PEM), f"ssl.truststore.certificates needs ssl.truststore.type=PEM, not {declared}")
        _java_refuses(password is not None, "ssl.truststore.password is set for a PEM truststore")
        security_files.check_pem_certificates("ssl.truststore.certificates", certificates)
        security_files.check_opens("ssl.truststore.certificates", cadata=security_files.normalized(certificates))
        _imply(implied, "ssl.truststore.type", declared)
        return dict(ca_pem=security_files.normalized(certificates), truststore_type=PEM)
    if location is None:
        _java_refuses(password is not None, "ssl.truststore.password is set without ssl.truststore.location")
        return {}
    kind, text = _located_store("truststore", location, declared)
    if kind != PEM:
        return dict(truststore_file=location, truststore_type=kind, truststore_password=password)
    _java_refuses(password is not None, "ssl.truststore.password is set for a PEM truststore")
    security_files.check_pem_certificates(f"ssl.truststore.location {location}", text)
    security_files.check_opens(f"ssl.truststore.location {location}", cafile=location)
    _imply(implied, "ssl.truststore.type", declared)
    return dict(ca_file=location, truststore_type=PEM)


def _keystore(value, implied: dict[str, str], has_key_password: bool) -> dict:
    location, key, chain = value("ssl.keystore.location"), value("ssl.keystore.key"), value("ssl.keystore.certificate.chain")
    declared, password = (value("ssl.keystore.type") or "").upper() or None, value("ssl.keystore.password")
    if key is not None or chain is not None:
        _java_refuses(key is None or chain is None, "ssl.keystore.key and ssl.keystore.certificate.chain go together")
        _java_refuses(location is not None, "ssl.keystore.key and ssl.keystore.location are both set")
        _java_refuses(declared not in (None, PEM), f"ssl.keystore.key needs ssl.keystore.type=PEM, not {declared}")
        _java_refuses(password is not None, "ssl.keystore.password is set for a PEM keystore (only ssl.key.password applies)")
        security_files.check_pem_key("ssl.keystore.key", key, has_key_password, need_certificate=False)
        security_files.check_pem_certificates("ssl.keystore.certificate.chain", chain)
        _imply(implied, "ssl.keystore.type", declared)
        return dict(key_pem=security_files.normalized(key), cert_chain_pem=security_files.normalized(chain),
                    keystore_type=PEM)
    if location is None:
        _java_refuses(password is not None, "ssl.keystore.password is set without ssl.keystore.location")
        return {}
    kind, text = _located_store("keystore", location, declared)
    if kind != PEM:
        _java_refuses(password is None, f"ssl.keystore.location is a {kind} keystore but ssl.keystore.password is not set")
        return dict(keystore_file=location, keystore_type=kind, keystore_password=password)
    _java_refuses(password is not None, "ssl.keystore.password is set for a PEM keystore (only ssl.key.password applies)")
    security_files.check_pem_key(f"ssl.keystore.location {location}", text, has_key_password, need_certificate=True)
    security_files.check_opens(f"ssl.keystore.location {location}", chain_file=location, password=value("ssl.key.password"))
    _imply(implied, "ssl.keystore.type", declared)
    return dict(cert_file=location, key_file=location, keystore_type=PEM)


def _located_store(store: str, location: str, declared: str | None) -> tuple[str, str]:
    """A store file's type (as declared, else as its bytes show) and, when PEM, its text."""
    sniffed, text = security_files.sniff(f"ssl.{store}.location", location)
    kind = declared or sniffed
    if kind == PEM and text is None:
        raise ConfigError(f"ssl.{store}.location {location}: ssl.{store}.type=PEM but the file is not PEM")
    return kind, text


def _imply(implied: dict[str, str], type_key: str, declared: str | None) -> None:
    """PEM content without a declared type: the Java client, which would read it as JKS, is told PEM."""
    if declared is None:
        implied[type_key] = PEM


def _java_refuses(condition: bool, what: str) -> None:
    if condition:
        raise ConfigError(f"{what}: the Java client refuses this, so kafkabench refuses it for every client")


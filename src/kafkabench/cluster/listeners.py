"""The embedded cluster's client listeners and what securing them takes: the brokers' settings for each, the
throw-away CA and certificates, the SASL users, and the client.properties (Java names) that say how to connect.

A cluster has one or more client listeners, each on its own port: the first is the one brokers talk to each
other over and the one `bootstrap_servers` names; more listeners (`security-cost` runs plaintext, TLS and SASL_SSL
side by side) are there for clients that ask for them. The KRaft quorum's own listener stays plaintext on
loopback: it carries no client traffic.

Secrets live in the cluster directory's `secrets/` (owner-only): the CA's and each holder's keys, one password file
per SASL user, and a client.properties per listener (it holds the JAAS text with the password). SCRAM users are
written into the storage when it is formatted (`--add-scram`), so brokers can authenticate to each other from the
first second; more are added with `add_scram_user` (AlterUserScramCredentials). PLAIN users are the brokers' JAAS
text itself, fixed at start.
"""

from __future__ import annotations

import os
import re
import secrets
import shutil
from pathlib import Path
from typing import Literal

from pydantic import BaseModel

from kafkabench.cluster import certificates
from kafkabench.errors import ClusterError

Mode = Literal["plaintext", "ssl", "mtls", "sasl_plaintext", "sasl_ssl"]
MODES: tuple[str, ...] = ("plaintext", "ssl", "mtls", "sasl_plaintext", "sasl_ssl")
PROTOCOLS = {"plaintext": "PLAINTEXT", "ssl": "SSL", "mtls": "SSL", "sasl_plaintext": "SASL_PLAINTEXT",
             "sasl_ssl": "SASL_SSL"}
MECHANISMS = ("SCRAM-SHA-512", "SCRAM-SHA-256", "PLAIN")
BROKER_USER = "admin"  # brokers authenticate to each other as this user
CLIENT_USER = "bench"  # client.properties connects as this one
SCRAM_LOGIN = "org.apache.kafka.common.security.scram.ScramLoginModule"
PLAIN_LOGIN = "org.apache.kafka.common.security.plain.PlainLoginModule"
_USER_NAME = re.compile(r"^[A-Za-z0-9._-]+$")


class Security(BaseModel):
    """What a cluster's client listeners are, as its state file records it."""

    listeners: list[Mode] = ["plaintext"]
    mechanism: str = "SCRAM-SHA-512"  # for the sasl_* listeners
    secrets_dir: Path | None = None  # None: nothing secured
    certificate_hosts: list[str] = ["localhost", "127.0.0.1"]  # the brokers' certificate names (SANs)

    @property
    def primary(self) -> str:
        return self.listeners[0]

    @property
    def uses_tls(self) -> bool:
        return any(mode in ("ssl", "mtls", "sasl_ssl") for mode in self.listeners)

    @property
    def uses_sasl(self) -> bool:
        return any(mode.startswith("sasl_") for mode in self.listeners)

    def describe(self, mode: str | None = None) -> str:
        """e.g. `SASL_SSL (SCRAM-SHA-512)`, `SSL (client certificates required)`."""
        mode = mode or self.primary
        extra = {"mtls": " (client certificates required)"}.get(mode, f" ({self.mechanism})" if mode.startswith("sasl_") else "")
        return PROTOCOLS[mode] + extra

    # ---- files -------------------------------------------------------------------------------

    def tls(self) -> certificates.Certificates:
        directory = self._secrets() / "tls"
        return certificates.Certificates(directory, directory / certificates.CA_FILE,
                                         _key_pair(directory, "broker"), _key_pair(directory, "client"))

    def password(self, user: str) -> str:
        path = self._secrets() / "users" / f"{user}.password"
        try:
            return path.read_text().strip()
        except FileNotFoundError:
            raise ClusterError(f"no user {user!r} in this cluster ({path} is missing); add one with "
                               "`kafkabench cluster add-user`") from None

    def client_properties(self, mode: str | None = None) -> Path:
        return self._secrets() / f"client-{mode or self.primary}.properties"

    def _secrets(self) -> Path:
        if self.secrets_dir is None:
            raise ClusterError("this cluster's listeners are plaintext: it has no secrets")
        return self.secrets_dir


def parse_listeners(text: str, mechanism: str) -> Security:
    """`--security sasl_ssl` or `--security plaintext,ssl,sasl_ssl` (the first is the brokers' own)."""
    modes = [item.strip().lower() for item in text.split(",") if item.strip()]
    unknown = [mode for mode in modes if mode not in MODES]
    if not modes or unknown:
        raise ClusterError(f"--security {text}: expected one or more of {', '.join(MODES)}, comma-separated")
    if len(set(modes)) != len(modes):
        raise ClusterError(f"--security {text}: a listener is named twice")
    if mechanism.upper() not in MECHANISMS:
        raise ClusterError(f"--sasl-mechanism {mechanism}: expected one of {', '.join(MECHANISMS)}")
    return Security(listeners=modes, mechanism=mechanism.upper())


def prepare_secrets(security: Security, directory: Path) -> Security:
    """Issue the certificates and passwords a secured cluster needs under `directory`/secrets; a plaintext one
    needs none."""
    if security.listeners == ["plaintext"]:
        return security
    secured = security.model_copy(update={"secrets_dir": directory / "secrets"})
    if secured.secrets_dir.exists():
        shutil.rmtree(secured.secrets_dir)  # an earlier cluster's: its users and CA are not this one's
    _private_dir(secured.secrets_dir)
    if secured.uses_tls:
        certificates.issue_certificates(secured.secrets_dir / "tls", hosts=tuple(secured.certificate_hosts))
    if secured.uses_sasl:
        for user in (BROKER_USER, CLIENT_USER):
            write_password(secured, user, secrets.token_hex(16))
    return secured


def write_password(security: Security, user: str, password: str) -> None:
    if not _USER_NAME.match(user):
        raise ClusterError(f"user name {user!r}: use letters, digits, '.', '_' and '-'")
    users = security._secrets() / "users"
    _private_dir(users)
    write_private(users / f"{user}.password", password + "\n")


def broker_settings(security: Security, listener_ports: dict[str, int], host: str) -> dict[str, str]:
    """The listeners of one broker (`listener_ports`: mode -> port) and what securing them takes."""
    names = {mode: mode.upper() for mode in security.listeners}
    settings = {
        "listeners": ",".join(f"{names[m]}://{host}:{listener_ports[m]}" for m in security.listeners),
        "advertised.listeners": ",".join(f"{names[m]}://{host}:{listener_ports[m]}" for m in security.listeners),
        "listener.security.protocol.map": ",".join(f"{names[m]}:{PROTOCOLS[m]}" for m in security.listeners),
        "inter.broker.listener.name": names[security.primary],
    }
    if security.uses_tls:
        tls = security.tls()
        settings.update({"ssl.keystore.type": "PEM", "ssl.keystore.location": str(tls.broker.keystore),
                         "ssl.truststore.type": "PEM", "ssl.truststore.location": str(tls.ca)})
    if "mtls" in security.listeners:
        settings["listener.name.mtls.ssl.client.auth"] = "required"
    if security.uses_sasl:
        settings["sasl.enabled.mechanisms"] = security.mechanism
        settings["sasl.mechanism.inter.broker.protocol"] = security.mechanism
        for mode in (m for m in security.listeners if m.startswith("sasl_")):
            key = f"listener.name.{names[mode].lower()}.{security.mechanism.lower()}.sasl.jaas.config"
            settings[key] = _broker_jaas(security)
    return settings


def has_scram_users(security: Security) -> bool:
    """The storage formatter makes SCRAM users (from passwords on its command line)."""
    return security.uses_sasl and security.mechanism != "PLAIN"


def scram_arguments(security: Security) -> list[str]:
    """The storage formatter's `--add-scram` arguments: the broker and client users exist from the start."""
    if not has_scram_users(security):
        return []
    return [argument for user in (BROKER_USER, CLIENT_USER) for argument in
            ("--add-scram", f"{security.mechanism}=[name={user},password={security.password(user)}]")]


def client_settings(security: Security, mode: str | None = None, user: str = CLIENT_USER,
                    key_pair: certificates.KeyPair | None = None) -> dict[str, str]:
    """How a client connects to listener `mode` (default: the primary), in Java names."""
    mode = mode or security.primary
    settings = {"security.protocol": PROTOCOLS[mode]}
    if PROTOCOLS[mode] in ("SSL", "SASL_SSL"):
        tls = security.tls()
        settings.update({"ssl.truststore.type": "PEM", "ssl.truststore.location": str(tls.ca)})
        if mode == "mtls":
            settings.update({"ssl.keystore.type": "PEM", "ssl.keystore.location": str((key_pair or tls.client).keystore)})
    if mode.startswith("sasl_"):
        login = PLAIN_LOGIN if security.mechanism == "PLAIN" else SCRAM_LOGIN
        settings["sasl.mechanism"] = security.mechanism
        settings["sasl.jaas.config"] = _jaas(login, user, security.password(user))
    return settings


def write_client_properties(security: Security, bootstrap: dict[str, str]) -> None:
    """One client.properties per listener (`bootstrap`: mode -> its bootstrap servers), owner-only."""
    if security.secrets_dir is None:
        return
    for mode in security.listeners:
        write_properties(security.client_properties(mode),
                         {"bootstrap.servers": bootstrap[mode], **client_settings(security, mode)},
                         f"kafkabench embedded cluster: the {security.describe(mode)} listener, as user {CLIENT_USER}")


def write_properties(path: Path, settings: dict[str, str], comment: str) -> None:
    """Java-style .properties, owner-only, readable as written (only backslashes escaped, as Java's loader needs)."""
    lines = [f"# {comment}", *(f"{key}={value}".replace("\\", "\\\\") for key, value in settings.items())]
    write_private(path, "\n".join(lines) + "\n")


def _broker_jaas(security: Security) -> str:
    if security.mechanism != "PLAIN":
        return _jaas(SCRAM_LOGIN, BROKER_USER, security.password(BROKER_USER))
    users = sorted(path.stem for path in (security._secrets() / "users").glob("*.password"))
    accounts = " ".join(f'user_{user}="{security.password(user)}"' for user in users)
    return f'{PLAIN_LOGIN} required username="{BROKER_USER}" password="{security.password(BROKER_USER)}" {accounts};'


def _jaas(login: str, user: str, password: str) -> str:
    return f'{login} required username="{user}" password="{password}";'


def _key_pair(directory: Path, name: str) -> certificates.KeyPair:
    return certificates.KeyPair(name, directory / f"{name}.pem", directory / f"{name}-key.pem",
                                directory / f"{name}-keystore.pem")


def _private_dir(path: Path) -> None:
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    path.chmod(0o700)


def write_private(path: Path, text: str) -> None:
    """Created owner-only, so a secret is never readable by others, even for a moment."""
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "w") as file:
        file.write(text)
    path.chmod(0o600)

"""Where a cluster is and how to get in: its bootstrap servers and the security settings (Java names) that every
client and kafkabench's own admin calls use to reach it.

The settings are the Java ones a user writes in a client.properties file (`security.protocol`, `sasl.*`, `ssl.*`);
`librdkafka()` says them the way confluent-kafka wants, for the admin client, the monitor's probe and the
read-backs, which all run on librdkafka in this process.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from kafkabench.config.security import is_security_key
from kafkabench.config.security_jaas import parse_jaas


@dataclass(frozen=True)
class Connection:
    bootstrap_servers: str
    security: tuple[tuple[str, str], ...] = ()  # Java names; a tuple, so a connection is hashable and immutable

    @classmethod
    def of(cls, bootstrap_servers: str, settings: dict[str, str] | None = None) -> Connection:
        """The security settings among `settings` (any other client setting is left to the client)."""
        secured = sorted((key, value) for key, value in (settings or {}).items() if is_security_key(key))
        return cls(bootstrap_servers, tuple(secured))

    @property
    def settings(self) -> dict[str, str]:
        return dict(self.security)

    @property
    def protocol(self) -> str:
        return self.settings.get("security.protocol", "PLAINTEXT").upper()

    @property
    def mechanism(self) -> str | None:
        return self.settings.get("sasl.mechanism", "GSSAPI") if self.protocol.startswith("SASL_") else None

    @property
    def user(self) -> str | None:
        """Who the SASL login says it is (the JAAS text's username)."""
        jaas = self.settings.get("sasl.jaas.config")
        return parse_jaas(jaas).username if self.mechanism and jaas else None

    def describe(self) -> str:
        """e.g. `SASL_SSL (SCRAM-SHA-512, user bench)`, `SSL (client certificate)` or `PLAINTEXT`."""
        if self.mechanism:
            return f"{self.protocol} ({self.mechanism}" + (f", user {self.user})" if self.user else ")")
        if self.protocol == "SSL" and any(key.startswith("ssl.keystore.") for key in self.settings):
            return f"{self.protocol} (client certificate)"
        return self.protocol

    def at(self, bootstrap_servers: str) -> Connection:
        """The same credentials, other servers (one broker's own listener)."""
        return Connection(bootstrap_servers, self.security)

    def librdkafka(self) -> dict[str, object]:
        """The security settings in librdkafka's names."""
        return dict(_translated("confluent", self.security))

    def kafka_python(self) -> dict[str, object]:
        """The security settings as kafka-python's keywords (its admin client reads log dir sizes)."""
        return dict(_translated("kafka-python", self.security))

    def __str__(self) -> str:
        return self.bootstrap_servers


@lru_cache(maxsize=64)
def _translated(client: str, security: tuple[tuple[str, str], ...]) -> dict[str, object]:
    """Once per set of settings: translating opens and checks the files they name."""
    if not security:
        return {}
    from kafkabench.config.security_clients import translate_security

    return translate_security(client, dict(security)).config

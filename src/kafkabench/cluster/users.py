"""`kafkabench cluster add-user NAME`: one more identity on a secured embedded cluster, and a client.properties
that connects as it.

SCRAM users are added to the running cluster (AlterUserScramCredentials, through the cluster's own connection);
an mTLS identity is a client certificate from the cluster's CA; PLAIN users are the brokers' JAAS text, read once
at start, so they are refused with what to do instead.
"""

from __future__ import annotations

import secrets
from pathlib import Path

from confluent_kafka import KafkaException
from confluent_kafka.admin import AdminClient, ScramCredentialInfo, ScramMechanism, UserScramCredentialUpsertion

from kafkabench.admin import quiet_client_config
from kafkabench.cluster import certificates, listeners
from kafkabench.cluster.embedded import EmbeddedCluster
from kafkabench.errors import ClusterError

SCRAM_ITERATIONS = 4096  # Kafka's minimum, as --add-scram's default
ALTER_TIMEOUT_S = 30


def add_user(cluster: EmbeddedCluster, name: str, password: str | None = None) -> Path:
    """The client.properties (owner-only) that connects to the first listener as `name`."""
    security = cluster.security
    mode = security.primary
    if mode.startswith("sasl_"):
        key_pair = None
        _add_sasl_user(cluster, name, password or secrets.token_hex(16))
    elif mode == "mtls":
        key_pair = certificates.issue_client_certificate(security.tls(), name)
    else:
        raise ClusterError(f"the cluster's listener is {security.describe()}: it has no users; start one with "
                           "`kafkabench cluster up --security sasl_ssl` (or mtls)")
    settings = {"bootstrap.servers": cluster.bootstrap_servers,
                **listeners.client_settings(security, mode, user=name, key_pair=key_pair)}
    path = security.client_properties(mode).with_name(f"{name}.properties")
    listeners.write_properties(path, settings, f"kafkabench embedded cluster: the {security.describe(mode)} listener, "
                                               f"as {name}")
    return path


def _add_sasl_user(cluster: EmbeddedCluster, name: str, password: str) -> None:
    security = cluster.security
    if security.mechanism == "PLAIN":
        raise ClusterError("PLAIN users are read from the brokers' JAAS settings once, at start: a user cannot be "
                           "added to a running cluster; use SCRAM (`cluster up --sasl-mechanism SCRAM-SHA-512`)")
    mechanism = ScramMechanism.SCRAM_SHA_512 if security.mechanism == "SCRAM-SHA-512" else ScramMechanism.SCRAM_SHA_256
    listeners.write_password(security, name, password)  # validates the name before the cluster is asked
    admin = AdminClient(quiet_client_config(cluster.connection))
    upsertion = UserScramCredentialUpsertion(name, ScramCredentialInfo(mechanism, SCRAM_ITERATIONS), password.encode())
    try:
        admin.alter_user_scram_credentials([upsertion], request_timeout=ALTER_TIMEOUT_S)[name].result(ALTER_TIMEOUT_S)
    except KafkaException as exc:
        (security.secrets_dir / "users" / f"{name}.password").unlink(missing_ok=True)  # no such user after all
        raise ClusterError(f"adding SCRAM user {name!r} failed: {exc.args[0].str()}") from exc

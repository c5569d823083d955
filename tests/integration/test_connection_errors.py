"""The pre-flight connection check against real secured brokers: every way a connection cannot work is produced
for real and told in one line that names what is wrong (user, mechanism, CAs, certificate names, host:port) and
never the password; the healthy listeners pass quietly."""

from __future__ import annotations

import os
import socket
import time

import pytest

from kafkabench.cluster import EmbeddedCluster
from kafkabench.cluster.embedded import SHORT_LIVED_JVM_OPTIONS
from kafkabench.cluster.certificates import certificate_subject, issue_certificates, issuer_subject
from kafkabench.cluster.listeners import CLIENT_USER, client_settings, parse_listeners
from kafkabench.connection import Connection
from kafkabench.connection_check import ConnectionProblem, check_connection
from kafkabench.errors import ConfigError
from tests.conftest import embedded

pytestmark = pytest.mark.integration

# the budget a check may take on a loaded machine; a check that decides from what the server did ends far below it
TIMEOUT_S = 15.0
MODES = ("plaintext", "sasl_ssl", "mtls", "sasl_plaintext")


class _ProbesWithoutHostCheck(EmbeddedCluster):
    """A cluster whose certificate names only localhost, while it advertises 127.0.0.1: its own readiness probe
    (librdkafka, host names checked) would be refused, so it probes with the check off. The tests connect with the
    check on, as a user's client.properties would."""

    def listener_connection(self, mode: str) -> Connection:
        connection = super().listener_connection(mode)
        return Connection.of(connection.bootstrap_servers,
                             {**connection.settings, "ssl.endpoint.identification.algorithm": ""})


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    security = parse_listeners(",".join(MODES), "SCRAM-SHA-512")
    with embedded(directory=tmp_path_factory.mktemp("listeners"), security=security) as started:
        yield started


@pytest.fixture(scope="module")
def localhost_only(tmp_path_factory):
    security = parse_listeners("ssl", "SCRAM-SHA-512").model_copy(update={"certificate_hosts": ["localhost"]})
    with _ProbesWithoutHostCheck(directory=tmp_path_factory.mktemp("localhost"), security=security,
                                 jvm_options=SHORT_LIVED_JVM_OPTIONS) as started:
        yield started


@pytest.fixture(scope="module")
def other_ca(tmp_path_factory):
    return issue_certificates(tmp_path_factory.mktemp("other-ca"))


def connection(cluster, mode: str, at: str | None = None, **changes: str | None) -> Connection:
    """Listener `mode`'s client settings (user bench), sent to listener `at`, with settings changed (None drops)."""
    settings = {**client_settings(cluster.security, mode), **changes}
    return Connection.of(cluster.listener_connection(at or mode).bootstrap_servers,
                         {key: value for key, value in settings.items() if value is not None})


def problem(connection: Connection) -> str:
    with pytest.raises(ConnectionProblem) as raised:
        check_connection(connection, timeout_s=TIMEOUT_S)
    line = str(raised.value)
    assert "\n" not in line
    return line


def server(cluster, mode: str) -> str:
    return cluster.listener_connection(mode).bootstrap_servers


def threads() -> int:
    return len(os.listdir("/proc/self/task"))


@pytest.mark.parametrize("mode", MODES)
def test_each_healthy_listener_passes_quietly_and_leaves_no_thread(cluster, mode):
    before, started = threads(), time.monotonic()
    check_connection(cluster.listener_connection(mode), timeout_s=TIMEOUT_S)
    assert time.monotonic() - started < TIMEOUT_S / 3  # answered, not timed out
    assert threads() == before


def test_a_wrong_password_names_user_and_mechanism_never_the_password(cluster):
    jaas = client_settings(cluster.security, "sasl_ssl")["sasl.jaas.config"]
    password = cluster.security.password(CLIENT_USER)
    wrong = jaas.replace(password, "not-the-password-4711")
    before = threads()
    line = problem(connection(cluster, "sasl_ssl", **{"sasl.jaas.config": wrong}))
    assert line == (f"authentication failed for user 'bench' with SCRAM-SHA-512 (the broker at "
                    f"{server(cluster, 'sasl_ssl')} refused the password in sasl.jaas.config)")
    assert "not-the-password-4711" not in line and password not in line
    assert threads() == before


def test_an_unknown_user_is_refused_by_name(cluster):
    jaas = client_settings(cluster.security, "sasl_ssl")["sasl.jaas.config"].replace('"bench"', '"nobody"')
    line = problem(connection(cluster, "sasl_ssl", **{"sasl.jaas.config": jaas}))
    assert "user 'nobody' with SCRAM-SHA-512" in line and cluster.security.password(CLIENT_USER) not in line


def test_a_mechanism_the_listener_does_not_offer_names_what_it_offers(cluster):
    line = problem(connection(cluster, "sasl_ssl", **{"sasl.mechanism": "SCRAM-SHA-256"}))
    assert line == (f"{server(cluster, 'sasl_ssl')} does not offer sasl.mechanism=SCRAM-SHA-256 (it offers "
                    "SCRAM-SHA-512); set sasl.mechanism to one of them")


def test_a_truststore_of_another_ca_names_both_cas(cluster, other_ca):
    line = problem(connection(cluster, "sasl_ssl", **{"ssl.truststore.location": str(other_ca.ca)}))
    broker_ca = issuer_subject(cluster.security.tls().broker.certificate)
    assert broker_ca == certificate_subject(cluster.security.tls().ca) != certificate_subject(other_ca.ca)
    assert line == (f"the broker's certificate at {server(cluster, 'sasl_ssl')} is issued by '{broker_ca}' but "
                    f"ssl.truststore.location {other_ca.ca} trusts '{certificate_subject(other_ca.ca)}'; "
                    "use the cluster's CA file")


def test_a_certificate_without_the_connected_name_says_which_names_it_has(localhost_only):
    settings = client_settings(localhost_only.security, "ssl")  # the host name check on
    line = problem(Connection.of(localhost_only.bootstrap_servers, settings))
    assert line == ("host name mismatch: connected to 127.0.0.1, the broker's certificate names localhost "
                    "(set ssl.endpoint.identification.algorithm= to skip the check, or connect by a name it has)")
    check_connection(localhost_only.connection, timeout_s=TIMEOUT_S)  # the check off


@pytest.mark.parametrize("at", ["sasl_ssl", "mtls"])
def test_a_plaintext_client_on_a_tls_listener(cluster, at):
    line = problem(connection(cluster, "plaintext", at=at))
    assert line == (f"{server(cluster, at)} speaks TLS but security.protocol=PLAINTEXT; set security.protocol=SSL "
                    "(or SASL_SSL) with ssl.truststore.location")


@pytest.mark.parametrize(("mode", "wanted"), [("mtls", "PLAINTEXT (or SASL_PLAINTEXT)"), ("sasl_ssl", "SASL_PLAINTEXT")])
def test_a_tls_client_on_a_plaintext_listener(cluster, mode, wanted):
    protocol = "SSL" if mode == "mtls" else "SASL_SSL"
    line = problem(connection(cluster, mode, at="plaintext"))
    assert line == (f"{server(cluster, 'plaintext')} does not speak TLS but security.protocol={protocol}; set "
                    f"security.protocol={wanted}, or use the cluster's TLS listener")


@pytest.mark.parametrize("mode", ["sasl_ssl", "mtls"])
def test_the_mtls_listener_without_a_client_certificate(cluster, mode):
    line = problem(connection(cluster, mode, at="mtls", **{"ssl.keystore.location": None, "ssl.keystore.type": None}))
    assert line == (f"{server(cluster, 'mtls')} requires a client certificate (ssl.client.auth=required); set "
                    "ssl.keystore.location to a PEM with your key and certificate")


def test_a_client_certificate_of_another_ca_is_named_with_its_issuer(cluster, other_ca):
    keystore = str(other_ca.client.keystore)
    line = problem(connection(cluster, "mtls", **{"ssl.keystore.location": keystore}))
    assert line == (f"{server(cluster, 'mtls')} refused the client certificate in ssl.keystore.location {keystore} "
                    f"(issued by '{certificate_subject(other_ca.ca)}'); use one issued by a CA the broker trusts")


def test_a_sasl_client_on_a_listener_without_sasl(cluster):
    line = problem(connection(cluster, "sasl_plaintext", at="plaintext"))
    assert line == (f"{server(cluster, 'plaintext')} does not take SASL but security.protocol=SASL_PLAINTEXT; set "
                    "security.protocol=PLAINTEXT, or use the cluster's SASL listener")


@pytest.mark.parametrize(("mode", "at", "wanted"), [("plaintext", "sasl_plaintext", "SASL_PLAINTEXT"),
                                                     ("sasl_ssl", "sasl_ssl", "SASL_SSL")])
def test_a_client_without_sasl_on_a_sasl_listener(cluster, mode, at, wanted):
    dropped = {"security.protocol": "SSL", "sasl.mechanism": None, "sasl.jaas.config": None} if mode == "sasl_ssl" else {}
    line = problem(connection(cluster, mode, at=at, **dropped))
    assert line == (f"{server(cluster, at)} is a SASL listener (it offers SCRAM-SHA-512) but security.protocol="
                    f"{'SSL' if mode == 'sasl_ssl' else 'PLAINTEXT'}; set security.protocol={wanted} with sasl.mechanism "
                    "and sasl.jaas.config")


def test_a_closed_port_is_told_at_once():
    with socket.socket() as spare:
        spare.bind(("127.0.0.1", 0))
        port = spare.getsockname()[1]
    started = time.monotonic()
    line = problem(Connection(f"127.0.0.1:{port}"))  # refused: nothing to wait for
    assert line == f"cannot connect to 127.0.0.1:{port} (connection refused); is the cluster up?"
    assert time.monotonic() - started < TIMEOUT_S / 10


def test_the_first_reachable_server_is_the_one_checked(cluster):
    with socket.socket() as spare:
        spare.bind(("127.0.0.1", 0))
        closed = f"127.0.0.1:{spare.getsockname()[1]}"
    check_connection(Connection(f"{closed},{server(cluster, 'plaintext')}"), timeout_s=TIMEOUT_S)


@pytest.mark.parametrize("damage", ["missing", "broken key"])
def test_an_unreadable_key_file_is_refused_before_any_socket_naming_the_file(cluster, tmp_path, damage):
    keystore = tmp_path / "client-keystore.pem"
    if damage == "broken key":
        text = cluster.security.tls().client.keystore.read_text().splitlines()
        keystore.write_text("\n".join(line if i != 3 else "A" * len(line) for i, line in enumerate(text)) + "\n")
    with pytest.raises(ConfigError) as refused:
        check_connection(connection(cluster, "mtls", **{"ssl.keystore.location": str(keystore)}), timeout_s=TIMEOUT_S)
    assert str(keystore) in str(refused.value) and "\n" not in str(refused.value)

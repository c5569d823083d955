"""One Java-named security setup, translated for every client: what each gets, and what each is refused, by
name. Real PEM and PKCS12 files (tests/unit/pki.py): librdkafka's throwaway client loads them as it would."""

import pytest

from kafkabench.config.security import ClientSecurity, hostname_warning, is_security_key
from kafkabench.config.security_clients import translate_security
from kafkabench.config.security_jaas import parse_jaas
from kafkabench.config.translate import translate
from kafkabench.errors import ConfigError
from tests.unit.pki import KEY_PASSWORD, STORE_PASSWORD, make_pki

CLIENTS = ("java", "confluent", "kafka-python", "aiokafka")
SCRAM_JAAS = 'org.apache.kafka.common.security.scram.ScramLoginModule required username="bench" password="s3cret";'
PLAIN_JAAS = 'org.apache.kafka.common.security.plain.PlainLoginModule required password="pl4in" username="bench";'


@pytest.fixture(scope="module")
def pki(tmp_path_factory):
    return make_pki(tmp_path_factory.mktemp("pki"))


def refusal(client: str, settings: dict[str, str], role: str = "producer") -> str:
    with pytest.raises(ConfigError) as refused:
        translate(client, role, settings)
    return str(refused.value)


# SASL_SSL + SCRAM-SHA-512, PEM truststore


def test_scram_over_sasl_ssl_with_a_pem_truststore(pki):
    settings = {"security.protocol": "SASL_SSL", "sasl.mechanism": "SCRAM-SHA-512", "sasl.jaas.config": SCRAM_JAAS,
                "ssl.truststore.location": str(pki.ca), "acks": "all"}
    assert translate("java", "producer", settings).config == {**settings, "ssl.truststore.type": "PEM"}
    assert translate("confluent", "producer", settings).config == {
        "acks": "all", "security.protocol": "SASL_SSL", "sasl.mechanisms": "SCRAM-SHA-512", "sasl.username": "bench",
        "sasl.password": "s3cret", "ssl.ca.location": str(pki.ca), "ssl.endpoint.identification.algorithm": "https"}
    python = {"security_protocol": "SASL_SSL", "sasl_mechanism": "SCRAM-SHA-512", "sasl_plain_username": "bench",
              "sasl_plain_password": "s3cret", "ssl_cafile": str(pki.ca), "ssl_check_hostname": True}
    assert translate("kafka-python", "producer", settings).config == {"acks": "all", **python}
    assert translate("aiokafka", "consumer", settings).config == python  # acks: a producer setting only
    for client in CLIENTS:
        assert translate(client, "producer", settings).not_applicable == []


def test_a_declared_pem_type_is_passed_to_java_as_given(pki):
    settings = {"security.protocol": "SSL", "ssl.truststore.location": str(pki.ca), "ssl.truststore.type": "PEM"}
    assert translate("java", "consumer", settings).config == settings
    assert translate("confluent", "consumer", settings).config["ssl.ca.location"] == str(pki.ca)


# mTLS: SSL with a PEM keystore


def test_mtls_with_an_encrypted_pem_keystore(pki):
    settings = {"security.protocol": "SSL", "ssl.truststore.location": str(pki.ca), "ssl.truststore.type": "PEM",
                "ssl.keystore.location": str(pki.client_encrypted), "ssl.keystore.type": "PEM",
                "ssl.key.password": KEY_PASSWORD}
    client = str(pki.client_encrypted)
    assert translate("java", "consumer", settings).config == settings
    assert translate("confluent", "consumer", settings).config == {
        "security.protocol": "SSL", "ssl.ca.location": str(pki.ca), "ssl.certificate.location": client,
        "ssl.key.location": client, "ssl.key.password": KEY_PASSWORD, "ssl.endpoint.identification.algorithm": "https"}
    python = {"security_protocol": "SSL", "ssl_cafile": str(pki.ca), "ssl_certfile": client, "ssl_keyfile": client,
              "ssl_password": KEY_PASSWORD, "ssl_check_hostname": True}
    assert translate("kafka-python", "consumer", settings).config == python
    assert translate("aiokafka", "consumer", settings).config == python


def test_an_unencrypted_keystore_without_declared_type_is_sniffed_as_pem(pki):
    settings = {"security.protocol": "SSL", "ssl.keystore.location": str(pki.client)}
    assert translate("java", "producer", settings).config == {**settings, "ssl.keystore.type": "PEM"}
    config = translate("confluent", "producer", settings).config
    assert config["ssl.certificate.location"] == config["ssl.key.location"] == str(pki.client)
    assert "ssl.key.password" not in config
    assert "ssl_password" not in translate("kafka-python", "producer", settings).config


def test_a_wrong_key_password_is_refused_for_every_client(pki):
    settings = {"security.protocol": "SSL", "ssl.keystore.location": str(pki.client_encrypted),
                "ssl.key.password": "not-the-one"}
    for client in CLIENTS:
        message = refusal(client, settings)
        assert "the key cannot be opened (is ssl.key.password right?)" in message and "not-the-one" not in message


def test_inline_pem_as_a_properties_file_flattens_it(pki):
    """Java reads a PEM value joined onto one line; librdkafka and Python get the lines back."""
    flat = {"security.protocol": "SSL", "ssl.truststore.certificates": pki.ca_pem.replace("\n", " "),
            "ssl.keystore.key": pki.client_key_pem.replace("\n", " "),
            "ssl.keystore.certificate.chain": pki.client_chain_pem.replace("\n", " ")}
    assert translate("java", "producer", flat).config == {
        **flat, "ssl.truststore.type": "PEM", "ssl.keystore.type": "PEM"}
    confluent = translate("confluent", "producer", flat).config
    assert confluent["ssl.ca.pem"] == pki.ca_pem
    assert confluent["ssl.key.pem"] == pki.client_key_pem
    assert confluent["ssl.certificate.pem"] == pki.client_chain_pem
    assert "cannot take inline CA certificates (ssl.truststore.certificates)" in refusal("kafka-python", flat)
    assert refusal("aiokafka", flat).startswith("aiokafka cannot take an inline private key (ssl.keystore.key)")
    ca_only = {"security.protocol": "SSL", "ssl.truststore.certificates": pki.ca_pem}
    assert translate("aiokafka", "producer", ca_only).config["ssl_cadata"] == pki.ca_pem


# PLAIN over SASL_PLAINTEXT


def test_plain_over_sasl_plaintext_writes_no_tls_settings(pki):
    settings = {"security.protocol": "sasl_plaintext", "sasl.mechanism": "PLAIN", "sasl.jaas.config": PLAIN_JAAS,
                "ssl.truststore.location": str(pki.ca)}  # inert without TLS, for Java as for the others
    assert translate("java", "producer", settings).config == {**settings, "ssl.truststore.type": "PEM"}
    assert translate("confluent", "producer", settings).config == {
        "security.protocol": "SASL_PLAINTEXT", "sasl.mechanisms": "PLAIN", "sasl.username": "bench",
        "sasl.password": "pl4in"}
    python = {"security_protocol": "SASL_PLAINTEXT", "sasl_mechanism": "PLAIN", "sasl_plain_username": "bench",
              "sasl_plain_password": "pl4in"}
    assert translate("kafka-python", "producer", settings).config == python
    assert translate("aiokafka", "producer", settings).config == python


def test_protocol_defaults_to_plaintext_and_a_bad_one_is_refused():
    assert translate("kafka-python", "producer", {"sasl.mechanism": "PLAIN"}).config == {"security_protocol": "PLAINTEXT"}
    for client in CLIENTS:
        assert refusal(client, {"security.protocol": "TLS"}) == \
            "security.protocol=TLS: expected one of PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL"


# host name verification


def test_host_name_verification_off(pki):
    settings = {"security.protocol": "SSL", "ssl.truststore.location": str(pki.ca),
                "ssl.endpoint.identification.algorithm": ""}
    assert translate("java", "producer", settings).config["ssl.endpoint.identification.algorithm"] == ""
    assert translate("confluent", "producer", settings).config["ssl.endpoint.identification.algorithm"] == "none"
    assert translate("kafka-python", "producer", settings).config["ssl_check_hostname"] is False
    assert translate("aiokafka", "producer", settings).config["ssl_check_hostname"] is False
    assert hostname_warning(settings) == (
        "ssl.endpoint.identification.algorithm is empty: the broker's certificate is not checked against its host "
        "name; anyone with a certificate from this CA can pose as the broker")
    assert hostname_warning({**settings, "ssl.endpoint.identification.algorithm": "https"}) is None
    assert hostname_warning({"security.protocol": "SSL"}) is None
    assert hostname_warning({"ssl.endpoint.identification.algorithm": ""}) is None  # no TLS: nothing to check


def test_an_unknown_identification_algorithm_is_refused():
    assert refusal("confluent", {"security.protocol": "SSL", "ssl.endpoint.identification.algorithm": "ldaps"}) == \
        "ssl.endpoint.identification.algorithm=ldaps: expected https (check the host name) or empty (do not)"


# JAAS


def test_jaas_options_in_any_order_with_escaped_quotes_and_bare_words():
    login = parse_jaas('org.apache.kafka.common.security.plain.PlainLoginModule  Required\n'
                       '  password="a \\"quoted\\" pass;word"   username=bench debug=true ;')
    assert login.module == "org.apache.kafka.common.security.plain.PlainLoginModule" and login.flag == "required"
    assert login.options == {"password": 'a "quoted" pass;word', "username": "bench", "debug": "true"}
    security = ClientSecurity.from_java({"security.protocol": "SASL_SSL", "sasl.mechanism": "PLAIN",
                                         "sasl.jaas.config": PLAIN_JAAS})
    assert (security.username, security.password) == ("bench", "pl4in")
    assert "pl4in" not in repr(security)


@pytest.mark.parametrize("text, why", [
    ('x.ScramLoginModule required username="bench" password="hunter22', "a quoted value is not closed"),
    ('x.ScramLoginModule required username="bench" password="hunter22"', "it does not end with ';'"),
    ('x.ScramLoginModule username="bench" password="hunter22";', "the second word must be a control flag"),
    ('x.ScramLoginModule required username "bench" password="hunter22";', "option 1 is not key=value"),
    ('a.M required password="hunter22"; b.M required password="hunter22";', "more than one login module"),
    ('password="hunter22"', "expected `LoginModuleClass required"),
])
def test_an_unparsable_jaas_text_is_refused_without_showing_it(text, why):
    for client in CLIENTS:
        message = refusal(client, {"security.protocol": "SASL_SSL", "sasl.mechanism": "SCRAM-SHA-256",
                                   "sasl.jaas.config": text})
        assert message.startswith("sasl.jaas.config cannot be parsed: ") and why in message
        assert "hunter22" not in message and "bench" not in message


def test_a_jaas_text_is_parsed_even_where_sasl_is_not_used():
    """A broken JAAS text is refused alike for every client, whatever the protocol."""
    for client in CLIENTS:
        assert "cannot be parsed" in refusal(client, {"sasl.jaas.config": 'x.M required password="hunter22'})


def test_a_missing_password_or_jaas_text(pki):
    no_password = {"security.protocol": "SASL_SSL", "sasl.mechanism": "SCRAM-SHA-512",
                   "sasl.jaas.config": 'x.ScramLoginModule required username="bench";'}
    for client in CLIENTS:
        assert refusal(client, no_password) == "sasl.jaas.config has no password option; SCRAM-SHA-512 needs both"
    # no login at all is left for the cluster to fill in (a profile names only the mechanism) or to refuse
    for client in CLIENTS:
        translated = translate(client, "producer", {"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "PLAIN"})
        assert not any("password" in key for key in translated.config)


# stores a client cannot read


def test_a_pkcs12_keystore_for_confluent_and_java_only(pki):
    settings = {"security.protocol": "SSL", "ssl.truststore.location": str(pki.ca),
                "ssl.keystore.location": str(pki.client_p12), "ssl.keystore.type": "PKCS12",
                "ssl.keystore.password": STORE_PASSWORD}
    assert translate("java", "producer", settings).config == {**settings, "ssl.truststore.type": "PEM"}
    config = translate("confluent", "producer", settings).config
    assert (config["ssl.keystore.location"], config["ssl.keystore.password"]) == (str(pki.client_p12), STORE_PASSWORD)
    for client in ("kafka-python", "aiokafka"):
        assert refusal(client, settings) == (
            f"{client} cannot read a PKCS12 keystore (ssl.keystore.location={pki.client_p12}): only the Java client "
            f"and confluent can; convert it to PEM and set ssl.keystore.type=PEM")


def test_a_pkcs12_keystore_is_recognised_without_a_declared_type(pki):
    settings = {"security.protocol": "SSL", "ssl.keystore.location": str(pki.client_p12),
                "ssl.keystore.password": STORE_PASSWORD}
    assert translate("confluent", "producer", settings).config["ssl.keystore.location"] == str(pki.client_p12)
    assert translate("java", "producer", settings).config == settings  # Java's JKS type reads PKCS12 too


def test_a_wrong_pkcs12_password_is_librdkafkas_refusal_without_the_password(pki):
    message = refusal("confluent", {"security.protocol": "SSL", "ssl.keystore.location": str(pki.client_p12),
                                    "ssl.keystore.type": "PKCS12", "ssl.keystore.password": "wrong-pass"})
    assert message.startswith("confluent (librdkafka) rejects the producer settings") and "wrong-pass" not in message


def test_a_jks_truststore_is_for_the_java_client_only(pki):
    settings = {"security.protocol": "SASL_SSL", "sasl.mechanism": "PLAIN", "sasl.jaas.config": PLAIN_JAAS,
                "ssl.truststore.location": str(pki.truststore_jks), "ssl.truststore.password": STORE_PASSWORD}
    assert translate("java", "producer", settings).config == settings
    labels = {"confluent": "confluent (librdkafka)", "kafka-python": "kafka-python", "aiokafka": "aiokafka"}
    for client, label in labels.items():
        assert refusal(client, settings) == (
            f"{label} cannot read a JKS truststore (ssl.truststore.location={pki.truststore_jks}): only the Java "
            f"client can; convert it to PEM and set ssl.truststore.type=PEM")


def test_a_declared_jks_type_wins_over_the_files_bytes(pki):
    settings = {"security.protocol": "SSL", "ssl.truststore.location": str(pki.ca), "ssl.truststore.type": "jks"}
    assert "cannot read a JKS truststore" in refusal("kafka-python", settings)


# files


def test_a_missing_truststore_file_is_refused_for_every_client(tmp_path):
    missing = tmp_path / "ca.pem"
    for client in CLIENTS:
        assert refusal(client, {"security.protocol": "SSL", "ssl.truststore.location": str(missing)}) == \
            f"ssl.truststore.location {missing}: no such file"


def test_a_relative_path_reaches_the_clients_absolute(pki, monkeypatch):
    monkeypatch.chdir(pki.ca.parent)
    settings = {"security.protocol": "SSL", "ssl.truststore.location": pki.ca.name}
    assert translate("java", "producer", settings).config["ssl.truststore.location"] == pki.ca.name
    assert translate("kafka-python", "producer", settings).config["ssl_cafile"] == str(pki.ca)
    assert translate("confluent", "producer", settings).config["ssl.ca.location"] == str(pki.ca)


def test_what_the_java_client_refuses_is_refused_for_every_client(pki):
    cases = [
        ({"ssl.keystore.location": str(pki.client), "ssl.keystore.password": "x"},
         "ssl.keystore.password is set for a PEM keystore (only ssl.key.password applies)"),
        ({"ssl.truststore.location": str(pki.ca), "ssl.truststore.certificates": pki.ca_pem},
         "ssl.truststore.certificates and ssl.truststore.location are both set"),
        ({"ssl.keystore.key": pki.client_key_pem}, "ssl.keystore.key and ssl.keystore.certificate.chain go together"),
        ({"ssl.keystore.location": str(pki.client_p12), "ssl.keystore.type": "PKCS12"},
         "ssl.keystore.location is a PKCS12 keystore but ssl.keystore.password is not set"),
        ({"ssl.truststore.password": "x"}, "ssl.truststore.password is set without ssl.truststore.location"),
    ]
    for extra, what in cases:
        for client in CLIENTS:
            assert refusal(client, {"security.protocol": "SSL", **extra}) == \
                f"{what}: the Java client refuses this, so kafkabench refuses it for every client"


def test_keys_java_cannot_read(pki):
    traditional = {"security.protocol": "SSL", "ssl.keystore.location": str(pki.client_traditional)}
    assert refusal("aiokafka", traditional) == (
        f"ssl.keystore.location {pki.client_traditional}: the key is in a BEGIN EC PRIVATE KEY block; the Java "
        "client reads only PKCS#8 keys (convert with `openssl pkcs8 -topk8`)")
    encrypted = {"security.protocol": "SSL", "ssl.keystore.location": str(pki.client_encrypted)}
    assert refusal("confluent", encrypted).endswith("the private key is encrypted but ssl.key.password is not set")
    assert refusal("java", {**encrypted, "ssl.keystore.location": str(pki.client), "ssl.key.password": "x"}).endswith(
        "is not encrypted but ssl.key.password is set (the Java client then fails to decrypt it)")
    assert refusal("kafka-python", {"security.protocol": "SSL", "ssl.truststore.location": str(pki.client_p12),
                                    "ssl.truststore.type": "PEM"}).endswith("ssl.truststore.type=PEM but the file is not PEM")


# mechanisms


def test_a_mechanism_a_client_lacks_is_refused_by_name(pki):
    msk = {"security.protocol": "SASL_SSL", "sasl.mechanism": "AWS_MSK_IAM",
           "sasl.jaas.config": "software.amazon.msk.auth.iam.IAMLoginModule required;"}
    assert translate("java", "producer", msk).config == msk
    assert refusal("aiokafka", msk) == ("aiokafka cannot use sasl.mechanism=AWS_MSK_IAM "
                                        "(it supports GSSAPI, OAUTHBEARER, PLAIN, SCRAM-SHA-256, SCRAM-SHA-512)")
    assert refusal("confluent", msk).startswith("confluent (librdkafka) cannot use sasl.mechanism=AWS_MSK_IAM (it supports ")
    assert refusal("kafka-python", {**msk, "sasl.mechanism": "SCRAM-SHA-1"}).startswith(
        "kafka-python cannot use sasl.mechanism=SCRAM-SHA-1 (it supports AWS_MSK_IAM, GSSAPI, OAUTHBEARER, PLAIN")


def test_oauthbearer_needs_what_a_settings_file_cannot_give_the_python_clients():
    settings = {"security.protocol": "SASL_SSL", "sasl.mechanism": "OAUTHBEARER",
                "sasl.jaas.config": "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required;"}
    for client in ("kafka-python", "aiokafka"):
        assert "wants a token provider object (sasl_oauth_token_provider)" in refusal(client, settings)
    assert "give librdkafka's own settings too" in refusal("confluent", settings)
    # librdkafka's unsecured JWT: made locally, so the throwaway client fetches no token from anywhere
    config = translate("confluent", "producer", {**settings, "librdkafka:enable.sasl.oauthbearer.unsecure.jwt": "true",
                                                 "librdkafka:sasl.oauthbearer.config": "principal=bench"}).config
    assert config["sasl.mechanisms"] == "OAUTHBEARER" and config["sasl.oauthbearer.config"] == "principal=bench"


def test_a_mechanism_is_not_checked_where_sasl_is_not_used():
    assert translate("aiokafka", "producer", {"sasl.mechanism": "AWS_MSK_IAM"}).config == {"security_protocol": "PLAINTEXT"}


# other ssl.* / sasl.* names; native names


def test_other_security_names_keep_their_translation(pki):
    settings = {"security.protocol": "SSL", "ssl.truststore.location": str(pki.ca),
                "sasl.kerberos.service.name": "kafka", "ssl.protocol": "TLSv1.3"}
    assert is_security_key("ssl.protocol") and not is_security_key("librdkafka:ssl.ca.location")
    confluent = translate("confluent", "producer", settings)
    assert confluent.config["sasl.kerberos.service.name"] == "kafka" and confluent.not_applicable == ["ssl.protocol"]
    for client in ("kafka-python", "aiokafka"):
        translated = translate(client, "producer", settings)
        assert translated.config["sasl_kerberos_service_name"] == "kafka"
        assert translated.not_applicable == ["ssl.protocol"]


def test_a_native_name_wins_over_the_translated_one(pki):
    config = translate("confluent", "producer", {"security.protocol": "SSL", "ssl.truststore.location": str(pki.ca),
                                                 "librdkafka:ssl.ca.location": str(pki.client)}).config
    assert config["ssl.ca.location"] == str(pki.client)


def test_no_security_settings_no_security_output():
    for client in CLIENTS:
        assert translate_security(client, {"acks": "all"}).config == {}

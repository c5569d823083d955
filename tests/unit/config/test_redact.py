"""Secrets in every client's spelling are redacted; free text is scrubbed of secret values and of anything
shaped like a secret (a private key block, a password= assignment)."""

import pytest

from kafkabench.config.redact import REDACTED, REDACTED_KEY, is_secret, redact, scrub_text, secret_values


@pytest.mark.parametrize("key", [
    "sasl.jaas.config", "sasl.password", "sasl_plain_password", "ssl.key.password", "ssl_password",
    "ssl.keystore.password", "ssl.truststore.password", "ssl.key.pem", "ssl.keystore.key",
    "sasl.oauthbearer.client.credentials.client.secret", "sasl.oauthbearer.assertion.private.key.passphrase",
    "sasl_oauth_token_provider", "librdkafka:sasl.password", "librdkafka:ssl.key.pem", "sasl.oauthbearer.config",
    "client_secret", "delegation_token",
])
def test_secret_in_every_form(key):
    assert is_secret(key)


@pytest.mark.parametrize("key", [
    "ssl_cadata", "ssl.truststore.certificates", "ssl.keystore.certificate.chain", "ssl.ca.pem", "ssl_cafile",
    "ssl.keystore.location", "ssl_keyfile", "ssl.key.location", "sasl.username", "sasl_plain_username",
    "ssl_check_hostname", "security.protocol", "acks",
])
def test_public_settings_stay_readable(key):
    assert not is_secret(key)


def test_redact_keeps_empty_values_and_public_ones():
    config = {"sasl_plain_password": "hunter22", "ssl_password": "", "ssl_cadata": "-----BEGIN CERTIFICATE-----",
              "sasl.oauthbearer.client.credentials.client.secret": "s3cret", "ssl.keystore.key": None}
    assert redact(config) == {"sasl_plain_password": REDACTED, "ssl_password": "", "ssl_cadata": config["ssl_cadata"],
                              "sasl.oauthbearer.client.credentials.client.secret": REDACTED, "ssl.keystore.key": None}


def test_secret_values_include_the_password_parsed_out_of_jaas():
    config = {"producer": {"sasl.jaas.config": 'x.ScramLoginModule required username="bench" password="p4ss\\"word";',
                           "acks": "all", "ssl.key.password": "k3y-pass"},
              "consumer": {"sasl_plain_password": "hunter22", "sasl_plain_username": "bench"}}
    values = secret_values(config)
    assert 'p4ss"word' in values and "k3y-pass" in values and "hunter22" in values
    assert config["producer"]["sasl.jaas.config"] in values
    assert "bench" not in values and "all" not in values
    assert values == sorted(values, key=len, reverse=True)  # a longer secret is replaced before a part of it


def test_secret_values_survive_an_unparsable_jaas_text():
    assert secret_values({"sasl.jaas.config": 'x.M required password="unclosed'}) == ['x.M required password="unclosed']


def test_scrub_text_replaces_given_values_but_not_short_ones():
    text = "auth failed for bench with hunter22 (pin 123)"
    assert scrub_text(text, ["hunter22", "123", ""]) == f"auth failed for bench with {REDACTED} (pin 123)"


@pytest.mark.parametrize("kind", ["PRIVATE KEY", "ENCRYPTED PRIVATE KEY", "RSA PRIVATE KEY", "EC PRIVATE KEY"])
def test_scrub_text_removes_private_key_blocks(kind):
    text = (f"loading -----BEGIN {kind}-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n-----END {kind}-----\n"
            "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----")
    scrubbed = scrub_text(text)
    assert scrubbed.startswith(f"loading {REDACTED_KEY}\n") and "MIIEvQ" not in scrubbed
    assert "-----BEGIN CERTIFICATE-----\nMIIB" in scrubbed  # certificates are public


def test_scrub_text_removes_a_cut_off_private_key():
    assert scrub_text("key: -----BEGIN PRIVATE KEY-----\nMIIEvQIBADAN") == f"key: {REDACTED_KEY}"


def test_scrub_text_removes_passwords_from_jaas_like_text():
    text = ('org.x.ScramLoginModule required username="bench" password="s3\\"cret"; '
            "other: password='single quoted' and PASSWORD=bare;word clientSecret=\"abc\"")
    assert scrub_text(text) == (
        f'org.x.ScramLoginModule required username="bench" password="{REDACTED}"; '
        f"other: password='{REDACTED}' and PASSWORD={REDACTED};word clientSecret=\"{REDACTED}\"")


def test_scrub_text_removes_secret_items_of_a_printed_config():
    text = """{'sasl_plain_password': 'hunter22', "ssl.key.password": "k3y", 'ssl_cafile': '/ca.pem'}"""
    assert scrub_text(text) == (f"""{{'sasl_plain_password': '{REDACTED}', "ssl.key.password": "{REDACTED}", """
                                """'ssl_cafile': '/ca.pem'}""")


def test_scrub_text_leaves_ordinary_text_alone():
    text = "wrong password: authentication failed; sasl.jaas.config=<redacted>"
    assert scrub_text(text) == text

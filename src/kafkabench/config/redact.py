"""Secrets never reach results, reports or logs.

Keys are matched anywhere in the name, so a library's own form (`librdkafka:sasl.password`) is matched as
its Java counterpart is, and so are the clients' own spellings (`sasl_plain_password`, `ssl_password`);
private keys given inline (Java's `ssl.keystore.key`, librdkafka's `ssl.key.pem`) are secrets too.
Certificates are public (`ssl.truststore.certificates`, aiokafka's `ssl_cadata`): they stay readable.

Free text (a library's error, a traceback, a worker's echo) is scrubbed by value: `scrub_text` with the
values `secret_values` finds in the config, plus anything shaped like a secret whatever its value: a PEM
private key block, a `password=...` inside JAAS-like text.
"""

from __future__ import annotations

import re
from typing import Any, Iterable

REDACTED = "<redacted>"
REDACTED_KEY = "<redacted private key>"
_SECRET = re.compile(
    r"password|secret|token|sasl\.jaas\.config|sasl[._]oauthbearer|ssl\.key\.pem|keystore\.key",
    re.IGNORECASE,
)
_JAAS = re.compile(r"sasl\.jaas\.config$", re.IGNORECASE)
_PRIVATE_KEY = re.compile(r"-----BEGIN ([A-Z0-9 ]*PRIVATE KEY)-----.*?(?:-----END \1-----|\Z)", re.DOTALL)
# key=value where the key names a password or secret: quoted (escapes kept inside), or bare up to ; , space
_ASSIGNED = re.compile(
    r"""(?P<key>[\w.-]*(?:password|secret)\w*)(?P<sep>\s*=\s*)"""
    r"""(?:"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|[^\s;,'")}\]]+)""",
    re.IGNORECASE | re.DOTALL,
)
# 'key': 'value' (a repr or JSON of a config) where the key names a password or secret
_QUOTED_ITEM = re.compile(
    r"""(?P<key>["'][\w.:-]*(?:password|secret)[\w.-]*["']\s*:\s*)(?P<q>["'])(?:(?!(?P=q))[^\\]|\\.)*(?P=q)""",
    re.IGNORECASE | re.DOTALL,
)
_MIN_SECRET = 4  # shorter values would blank out ordinary words
_REMEMBERED: set[str] = set()  # every secret value this process has read: scrubbed from all it writes


def remember(values: Iterable[str | None]) -> None:
    """Secret values read from the user's settings (a password, a key's passphrase): whatever text this process
    writes later (results, reports, errors, tracebacks) goes through `scrub_text`, which blanks them."""
    _REMEMBERED.update(value for value in values if isinstance(value, str) and len(value) >= _MIN_SECRET)


def is_secret(key: str) -> bool:
    return bool(_SECRET.search(key))


def redact(config: dict[str, Any]) -> dict[str, Any]:
    return {key: REDACTED if is_secret(key) and value not in (None, "") else value for key, value in config.items()}


def shown(key: str, value: str) -> str:
    """A value as an error message may print it."""
    return REDACTED if is_secret(key) and value else value


def scrubbed(key: str, value: str, text: str) -> str:
    """A library's message about a value (librdkafka quotes what it rejects), without a secret value in it."""
    return text.replace(value, REDACTED) if is_secret(key) and value else text


def secret_values(config: dict[str, Any]) -> list[str]:
    """The secret values in a config (nested role dicts included), longest first, for `scrub_text`. A JAAS text
    counts whole and by its secret options, since a library may echo only the password it parsed out of it."""
    found: list[str] = []
    for key, value in config.items():
        if isinstance(value, dict):
            found += secret_values(value)
        elif isinstance(value, str) and value and is_secret(key):
            found.append(value)
            if _JAAS.search(key):
                found += _jaas_secrets(value)
    return sorted(set(found), key=len, reverse=True)


def scrub_text(text: str, secrets: Iterable[str] = ()) -> str:
    """Free text without the given or remembered secret values (those of 4 characters or more), private key
    blocks, or password/secret assignments."""
    every = {s for s in secrets if isinstance(s, str) and len(s) >= _MIN_SECRET} | _REMEMBERED
    for secret in sorted(every, key=len, reverse=True):
        text = text.replace(secret, REDACTED)
    text = _PRIVATE_KEY.sub(REDACTED_KEY, text)
    text = _QUOTED_ITEM.sub(lambda m: f"{m['key']}{m['q']}{REDACTED}{m['q']}", text)
    return _ASSIGNED.sub(_assigned, text)


def _assigned(match: re.Match) -> str:
    value = match[0][match.end("sep") - match.start():]
    if value == REDACTED:
        return match[0]
    quote = value[0] if value[0] in "\"'" else ""
    return f"{match['key']}{match['sep']}{quote}{REDACTED}{quote}"


def _jaas_secrets(text: str) -> list[str]:
    from kafkabench.config.security_jaas import parse_jaas
    from kafkabench.errors import ConfigError

    try:
        options = parse_jaas(text).options
    except ConfigError:  # not parseable: scrub_text still blanks its password="..." by shape
        return []
    return [value for name, value in options.items() if value and is_secret(name)]

"""Secrets never reach results, reports or logs.

Keys are matched anywhere in the name, so a library's own form (`librdkafka:sasl.password`) is matched as
its Java counterpart is; private keys given inline (Java's `ssl.keystore.key`, librdkafka's `ssl.key.pem`)
are secrets too.
"""

from __future__ import annotations

import re
from typing import Any

REDACTED = "<redacted>"
_SECRET = re.compile(
    r"password|secret|sasl\.jaas\.config|sasl[._]oauthbearer|sasl_oauth_token|ssl\.key\.pem|keystore\.key",
    re.IGNORECASE,
)


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

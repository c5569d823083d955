"""Secrets never reach results, reports or logs."""

from __future__ import annotations

import re
from typing import Any

REDACTED = "<redacted>"
_SECRET = re.compile(r"password|secret|sasl\.jaas\.config|sasl[._]oauthbearer|sasl_oauth_token", re.IGNORECASE)


def is_secret(key: str) -> bool:
    return bool(_SECRET.search(key))


def redact(config: dict[str, Any]) -> dict[str, Any]:
    return {key: REDACTED if is_secret(key) and value not in (None, "") else value for key, value in config.items()}

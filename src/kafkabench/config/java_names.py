"""The Java client's setting names, defaults and types: the vocabulary every other client is translated from.

Generated from the pinned kafka-clients jar by `tools/update_client_configs.py` (the Java worker's
`--describe`), so it is read from the library, not typed by hand.
"""

from __future__ import annotations

import difflib
import json
from functools import cache
from importlib import resources
from typing import Literal

Role = Literal["producer", "consumer", "admin", "topic"]


@cache
def _data() -> dict:
    return json.loads(resources.files("kafkabench.config").joinpath("java_client_configs.json").read_text())


def names(role: Role) -> frozenset[str]:
    return frozenset(_data()[role])


def default(role: Role, name: str) -> str | None:
    return _data()[role].get(name)


def java_type(role: Role, name: str) -> str | None:
    return _data().get("types", {}).get(role, {}).get(name)


def java_client_version() -> str:
    return _data()["client_version"]


def closest(name: str, candidates: frozenset[str], count: int = 3) -> list[str]:
    return difflib.get_close_matches(name, sorted(candidates), n=count, cutoff=0.6)

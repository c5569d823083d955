"""Settings from the user: Java-style .properties files and `-X key=value` overrides, with where each came from."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import javaproperties

from kafkabench.config import native
from kafkabench.errors import ConfigError

# a property line's key and value, as Java splits them: the key ends at '=', ':' or blank space
_KEY_VALUE = re.compile(r"([^=:\s]+)\s*(?:[=:]\s*)?(.*)", re.DOTALL)


@dataclass(frozen=True)
class Setting:
    value: str
    source: str  # "kafkabench", "-X", or the file it was read from

    @property
    def explicit(self) -> bool:
        return self.source != "kafkabench"


def read_properties_file(path: Path) -> dict[str, Setting]:
    try:
        with path.open(encoding="utf-8") as f:
            loaded = javaproperties.load(f, object_pairs_hook=list)
    except FileNotFoundError as exc:
        raise ConfigError(f"config file {path} does not exist") from exc
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise ConfigError(f"config file {path} cannot be read as Java properties: {exc}") from exc
    pairs = (_native_key_rejoined(key.strip(), value.strip()) for key, value in loaded)
    return {key: Setting(value, str(path)) for key, value in pairs}


def _native_key_rejoined(key: str, value: str) -> tuple[str, str]:
    """`librdkafka:linger.ms=5` in a .properties file: Java's syntax ends a key at its first ':', so the parser
    hands back key `librdkafka` and value `linger.ms=5`. Put the name back on the key. (Written the Java way,
    `librdkafka\\:linger.ms=5`, the key arrives whole and needs nothing.)"""
    split = _KEY_VALUE.fullmatch(value)
    if key not in native.FORMS or split is None:
        return key, value
    return native.FORMS[key].key(split[1]), split[2].strip()


def parse_overrides(items: list[str], option: str = "-X") -> dict[str, Setting]:
    settings = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise ConfigError(f"{option} {item!r}: expected KEY=VALUE, e.g. {option} linger.ms=5")
        settings[key.strip()] = Setting(value.strip(), option)
    return settings

"""Settings from the user: Java-style .properties files and `-X key=value` overrides, with where each came from."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import javaproperties

from kafkabench.errors import ConfigError


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
            loaded = javaproperties.load(f)
    except FileNotFoundError as exc:
        raise ConfigError(f"config file {path} does not exist") from exc
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise ConfigError(f"config file {path} cannot be read as Java properties: {exc}") from exc
    return {key.strip(): Setting(value.strip(), str(path)) for key, value in loaded.items()}


def parse_overrides(items: list[str], option: str = "-X") -> dict[str, Setting]:
    settings = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise ConfigError(f"{option} {item!r}: expected KEY=VALUE, e.g. {option} linger.ms=5")
        settings[key.strip()] = Setting(value.strip(), option)
    return settings

"""Latency objectives as a user writes them: `p99=50ms`, `p50=10ms`, `p99.9=1s`."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from kafkabench.errors import ConfigError

LOWEST_PERCENTILE, HIGHEST_PERCENTILE = 50.0, 99.9
_UNITS_MS = {"us": 0.001, "ms": 1.0, "s": 1000.0}
_SLO = re.compile(r"p(?P<percentile>\d+(?:\.\d+)?)\s*=\s*(?P<limit>\d+(?:\.\d+)?)\s*(?P<unit>us|ms|s)?")
FORM = "pNN=LIMIT with a unit, e.g. p99=50ms, p50=10ms or p99.9=1s"


@dataclass(frozen=True)
class Slo:
    percentile: float
    limit_ms: float

    @property
    def name(self) -> str:
        return f"p{self.percentile:g}"

    def __str__(self) -> str:
        return f"{self.name} <= {self.limit_ms:g} ms"


def parse_slo(text: str) -> Slo:
    match = _SLO.fullmatch(text.strip().lower())
    if match is None:
        raise ConfigError(f"--slo {text!r}: write it as {FORM}")
    if match["unit"] is None:
        raise ConfigError(f"--slo {text!r}: give the limit a unit (us, ms or s), e.g. p99={match['limit']}ms")
    percentile, limit_ms = float(match["percentile"]), float(match["limit"]) * _UNITS_MS[match["unit"]]
    if not LOWEST_PERCENTILE <= percentile <= HIGHEST_PERCENTILE:
        raise ConfigError(f"--slo {text!r}: the percentile must be between p{LOWEST_PERCENTILE:g} and "
                          f"p{HIGHEST_PERCENTILE:g}")
    if not math.isfinite(limit_ms) or limit_ms <= 0:
        raise ConfigError(f"--slo {text!r}: the limit must be more than 0")
    return Slo(percentile, limit_ms)

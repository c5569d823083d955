"""The one grammar of what happens to a cluster or a group during a run, shared by the faults (faults.spec:
`kill-leader:5,of=output`) and the groups lab's planned changes (`rolling-restart,pause=2`, `crash:1`):
`NAME[:NUMBER][,KEY[=VALUE]...]`, NAME lowercase words and digits joined by hyphens. What NAME, NUMBER and the options
mean is each reader's own."""

from __future__ import annotations

import re
from dataclasses import dataclass

_PHRASE = re.compile(r"^([a-z0-9]+(?:-[a-z0-9]+)*)(?::([0-9]*\.?[0-9]+(?:\.[0-9]+)*))?((?:,[a-z]+(?:=[^,]+)?)*)$")


@dataclass(frozen=True)
class Phrase:
    name: str
    number: str | None  # as written: a reader says whether it is seconds, a count or a release (4.4.0)
    options: tuple[tuple[str, str], ...]

    @classmethod
    def read(cls, text: str) -> Phrase | None:
        """The phrase, or None when the text does not have its form."""
        found = _PHRASE.match(text.strip())
        if not found:
            return None
        name, number, options = found.groups()
        pairs = tuple((key, value) for key, _, value in (option.partition("=") for option in options.split(",")[1:]))
        return cls(name, number, pairs)

    def unknown_option(self, allowed: tuple[str, ...]) -> str | None:
        """What a reader says of the first option not in `allowed` ("takes pause, not 'down'"); None when all are."""
        for key, _ in self.options:
            if key not in allowed:
                return f"{'takes ' + ', '.join(allowed) if allowed else 'takes no options'}, not {key!r}"
        return None


def is_seconds(value: str) -> bool:
    """An option's value that reads as seconds: a number >= 0."""
    try:
        return float(value) >= 0
    except ValueError:
        return False

"""A run's count dealt out to its workers or rounds: as even as can be, the first ones one more."""

from __future__ import annotations


def even_shares(total: int, parts: int) -> list[int]:
    """`total` in `parts` shares that differ by one at most and sum to it: 10 in 3 is [4, 3, 3]."""
    base, extra = divmod(total, parts)
    return [base + (index < extra) for index in range(parts)]

"""A producer's acknowledgements as they arrive, at the cost of a list append each.

The client's delivery callback appends (on whatever thread the library calls it from); the run takes what
arrived in bulk, once per batch of sends. The hand-over needs no lock: callbacks only append to the tail,
the taker only removes the prefix it measured, and each of those list operations is atomic under the GIL.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from kafkabench.core.windows import ns_to_us

ToMicros = Callable[[list], np.ndarray]


def seconds_to_us(seconds: list[float]) -> np.ndarray:
    """librdkafka's per-message latency: whole microseconds, handed out as float seconds."""
    return np.rint(np.asarray(seconds, dtype=np.float64) * 1e6).astype(np.int64)


class AckLog:
    """`latencies`: send call -> acknowledgement of every acknowledged record, in the unit `to_us` converts
    from. `sizes`: each acknowledged value's length, or None when every value has the same length (the run
    then counts bytes as records x size). `errors`: one "Type: text" per failed send."""

    def __init__(self, to_us: ToMicros = ns_to_us, sizes: bool = True) -> None:
        self.to_us = to_us
        self.latencies: list = []
        self.sizes: list[int] | None = [] if sizes else None
        self.errors: list[str] = []

    def take(self) -> tuple[np.ndarray, int | None, list[str]]:
        """(latencies in us, their values' bytes or None, errors) of everything acknowledged since the last take."""
        errors = _take_prefix(self.errors, len(self.errors))
        if self.sizes is None:
            latencies = _take_prefix(self.latencies, len(self.latencies))
            return self.to_us(latencies), None, errors
        done = len(self.sizes)  # appended after the latency: whoever has a size has a latency
        latencies, sizes = _take_prefix(self.latencies, done), _take_prefix(self.sizes, done)
        return self.to_us(latencies), sum(sizes), errors


def _take_prefix(values: list, count: int) -> list:
    taken = values[:count]
    del values[:count]
    return taken

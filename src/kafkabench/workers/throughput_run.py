"""What the scenarios share: the failure that ends one, and for produce and consume their stop conditions,
progress windows and outcome."""

from __future__ import annotations

import resource
import threading
import time
from typing import Callable

from kafkabench.core.clock import Clock
from kafkabench.core.protocol import ConsumeParams, Outcome, ProduceParams, Progress, Window
from kafkabench.core.windows import WindowedStats

Emit = Callable[[Progress], None]


class RunFailed(Exception):
    """The scenario cannot go on; `kind` is failure, timeout, integrity or config. The worker reports it as
    an `error` carrying what was measured so far."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message


class StopConditions:
    """count, duration or an early `finish`, whichever comes first."""

    def __init__(self, params: ProduceParams | ConsumeParams, stop: threading.Event, clock: Clock) -> None:
        self.count = params.count
        self.duration_ns = int(params.duration_s * 1e9) if params.duration_s is not None else None
        self.stop = stop
        self.clock = clock
        self.start_ns = 0

    def begin(self) -> int:
        self.start_ns = self.clock()
        return self.start_ns

    def reached(self, done: int) -> bool:
        if self.count is not None and done >= self.count:
            return True
        if self.duration_ns is not None and self.clock() - self.start_ns >= self.duration_ns:
            return True
        return self.stop.is_set()


def emit_due(stats: WindowedStats, done: int, emit: Emit) -> None:
    if stats.due():
        emit(Progress(done=done, window=stats.close_window()))


def emit_last(stats: WindowedStats, done: int, emit: Emit) -> Window:
    window = stats.close_window()
    emit(Progress(done=done, window=window))
    return window


def outcome(stats: WindowedStats, version: str, counters: dict[str, int], config: dict, start_ns: int | None,
            end_ns: int | None, cpu_start_s: float, timings: dict[str, float] | None = None) -> Outcome:
    stats.fold()
    return Outcome(
        client_version=version,
        histograms={metric: h.encode() for metric, h in stats.total.items()},
        counters={**counters, "out_of_range": stats.out_of_range, "negative": stats.negative},
        resources={"cpu_s": round(time.process_time() - cpu_start_s, 6),
                   "max_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024},
        effective_config=config,
        duration_s=(end_ns - start_ns) / 1e9 if start_ns is not None and end_ns is not None else 0.0,
        start_ns=start_ns,
        end_ns=end_ns,
        timings=timings or {},
    )

"""The ping-pong loop (seed 000), written once for every transport: one message in flight at a time.

`e2e` runs from just before the send call to the value in hand; `produce` to the acknowledgement (for
http and tcp: the server holding the whole value, on its own clock, the same monotonic clock on one
host); `consume` the rest. The first exchange is reported as `cold`; warm-up exchanges are not recorded.
Integrity is checked after the clock stops, so checking never adds to a latency.
"""

from __future__ import annotations

import resource
import time
from dataclasses import dataclass
from typing import Any, Callable, Protocol

from kafkabench.core.clock import Clock, monotonic_ns
from kafkabench.core.histogram import LatencyHistogram
from kafkabench.core.protocol import Outcome
from kafkabench.workers.throughput_run import RunFailed

METRICS = ("cold", "e2e", "produce", "consume")


@dataclass(frozen=True)
class Exchange:
    sent_ns: int
    acked_ns: int
    received_ns: int


class ExchangeFailed(RunFailed):
    """One exchange went wrong; `acked`: the broker had acknowledged it before it did."""

    def __init__(self, kind: str, message: str, acked: bool = False) -> None:
        super().__init__(kind, message)
        self.acked = acked


class Transport(Protocol):
    def version(self) -> str: ...
    def open(self) -> None: ...
    def exchange(self, seq: int) -> Exchange: ...
    def finish(self) -> None:
        """Checks deferred until after the clock stopped (a server's integrity check); raises ExchangeFailed."""
    def effective_config(self) -> dict[str, dict[str, Any]]: ...
    def close(self) -> None: ...


class PingPong:
    """`pause_s` of quiet before each exchange after the cold one (a camera's frame gap): what a message costs when
    the client, the network and the brokers have gone idle since the last one. The pause is outside every clock."""

    def __init__(self, transport: Transport, clock: Clock = monotonic_ns, pause_s: float = 0.0,
                 sleep: Callable[[float], None] = time.sleep) -> None:
        self.transport = transport
        self.clock = clock
        self.pause_s = pause_s
        self._sleep = sleep
        self.histograms = {metric: LatencyHistogram() for metric in METRICS}
        self.counters = {"sent": 0, "acked": 0, "received": 0, "errors": 0}
        self.measured = 0
        self._cpu_s = 0.0
        self._duration_ns = 0
        self._seq = 0

    def start(self, warmup: int) -> None:
        """The cold exchange, then the warm-up ones; none of them reach the steady-state histograms."""
        cold = self._exchange()
        self.histograms["cold"].record_ns(cold.received_ns - cold.sent_ns)
        for _ in range(warmup):
            self._pause()
            self._exchange()

    def run_round(self, count: int) -> None:
        cpu_before, wall_before = time.process_time(), self.clock()
        try:
            for _ in range(count):
                self._pause()
                done = self._exchange()
                self.histograms["e2e"].record_ns(done.received_ns - done.sent_ns)
                self.histograms["produce"].record_ns(done.acked_ns - done.sent_ns)
                self.histograms["consume"].record_ns(done.received_ns - done.acked_ns)
                self.measured += 1
        finally:
            self._cpu_s += time.process_time() - cpu_before
            self._duration_ns += self.clock() - wall_before

    def _pause(self) -> None:
        if self.pause_s:
            self._sleep(self.pause_s)

    def _exchange(self) -> Exchange:
        self._seq += 1
        self.counters["sent"] += 1
        try:
            done = self.transport.exchange(self._seq)
        except ExchangeFailed as failed:
            self.counters["errors"] += 1
            self.counters["acked"] += failed.acked
            self.counters["received"] += failed.kind == "integrity"  # a value came back, just not the one sent
            raise
        self.counters["acked"] += 1
        self.counters["received"] += 1
        return done

    def outcome(self, client_version: str) -> Outcome:
        out_of_range = sum(h.out_of_range for h in self.histograms.values())
        try:
            config = self.transport.effective_config()
        except Exception as exc:  # a broken client must not cost the measurements already made
            config = {"error": {"effective_config": str(exc)}}
        return Outcome(
            client_version=client_version,
            histograms={metric: h.encode() for metric, h in self.histograms.items()},
            counters={**self.counters, "out_of_range": out_of_range},
            resources={"cpu_s": round(self._cpu_s, 6), "max_rss_mb": _max_rss_mb()},
            effective_config=config,
            duration_s=self._duration_ns / 1e9,
        )


def _max_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux reports KiB

"""Where each client's produce time went: the broker's own phases of the Produce request of every measured message
(from its request logger, `cluster/request_log.py`, switched on for the run and off after it), and the client's
part, the rest of the measured produce time (its send, the request's transfer to the broker, which the broker's
total does not include, the answer's way back, and its callback).

Means over the measured messages, so the parts add up to the mean produce time exactly; the residual said is the
broker's own rounding (its phases, each to the microsecond, against its total). Only where kafkabench runs the
brokers: on another cluster the request logs are on its machines, and the breakdown says so instead of guessing.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from kafkabench.admin import KafkaAdmin
from kafkabench.cluster.request_log import LOGGER, PHASES, produce_timings
from kafkabench.cluster.target import Target
from kafkabench.errors import KafkabenchError

QUIET = "WARN"  # the embedded brokers' level for the request logger (cluster/broker_config.py's log4j2)
RESTORE_TIMEOUT_S = 3.0
PHASE_NAMES = {"requestQueueTimeMs": "request queue", "localTimeMs": "local (append)",
               "remoteTimeMs": "remote (followers)", "throttleTimeMs": "throttle",
               "responseQueueTimeMs": "response queue", "sendTimeMs": "send"}


@contextlib.contextmanager
def request_logging(target: Target, admin: KafkaAdmin, wanted: bool = True) -> Iterator[str | None]:
    """The brokers log every request while the block runs; yields why not, when they cannot (or were not asked)."""
    if not wanted:
        yield "not asked (--no-broker-phases)"
        return
    if not target.broker_logs:
        yield "not available: the brokers' request logs are on their own machines (kafkabench did not start them)"
        return
    switched = []
    try:
        for broker, _ in target.broker_logs:
            admin.set_broker_logger(broker, LOGGER, "DEBUG")
            switched.append(broker)
        yield None
    except KafkabenchError as exc:
        yield f"not available: the request logger could not be switched on ({exc})"
    finally:  # briefly: a broker the run lost (killed) comes back at its configured level anyway
        with KafkaAdmin(admin.connection, timeout_s=RESTORE_TIMEOUT_S) as quick:
            for broker in switched:
                with contextlib.suppress(KafkabenchError):
                    quick.set_broker_logger(broker, LOGGER, QUIET)


def breakdown(target: Target, topic: str, topic_id: str, first: int, count: int, produce_mean_ms: float) -> dict:
    """The measured messages' (offsets first .. first+count-1 of partition 0) broker phases and client part."""
    lines = []
    for _, path in target.broker_logs:
        with contextlib.suppress(OSError):
            with open(path, errors="replace") as log:
                lines += [line for line in log if topic in line or topic_id in line]
    found = produce_timings(lines, topic, topic_id)
    timings = [found[(0, offset)] for offset in range(first, first + count) if (0, offset) in found]
    if len(timings) < count:
        return {"error": f"not available: {len(timings)} of the {count} measured messages' Produce requests were "
                         "found in the brokers' request logs"}
    phases = {PHASE_NAMES[phase]: sum(t.phases[phase] for t in timings) / count for phase in PHASES}
    broker = sum(t.total_ms for t in timings) / count
    return {"messages": count, "produce_ms": produce_mean_ms, "broker_ms": broker, "client_ms": produce_mean_ms - broker,
            "phases_ms": phases, "residual_ms": broker - sum(phases.values())}


def text(client: str, parts: dict) -> str:
    if "error" in parts:
        return f"{client}: where the produce time went: {parts['error']}"
    phases = ", ".join(f"{name} {ms:.2f}" for name, ms in parts["phases_ms"].items() if ms >= 0.005)
    return (f"{client}: produce mean {parts['produce_ms']:.2f} ms over {parts['messages']} messages = client and wire "
            f"{parts['client_ms']:.2f} + broker {parts['broker_ms']:.2f} ({phases}; residual "
            f"{parts['residual_ms']:.3f} ms, the broker's rounding)")

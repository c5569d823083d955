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
from kafkabench.cluster.request_log import LOGGER, PHASES, RequestTiming, fetch_timings, produce_timings
from kafkabench.cluster.target import Target
from kafkabench.errors import KafkabenchError

QUIET = "WARN"  # the embedded brokers' level for the request logger (cluster/broker_config.py's log4j2)
RESTORE_TIMEOUT_S = 3.0
PRODUCE_PATH = {"produce: request queue": "requestQueueTimeMs", "produce: append": "localTimeMs",
                "produce: followers": "remoteTimeMs"}
FETCH_PATH = {"fetch: response queue": "responseQueueTimeMs", "fetch: throttle": "throttleTimeMs",
              "fetch: send": "sendTimeMs"}
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


def breakdown(target: Target, topic: str, topic_id: str, first: int, count: int, produce_mean_ms: float,
              e2e_mean_ms: float) -> dict:
    """The measured messages' (offsets first .. first+count-1 of partition 0) broker phases and client part."""
    lines = []
    for _, path in target.broker_logs:
        with contextlib.suppress(OSError):
            with open(path, errors="replace") as log:
                lines += [line for line in log if topic in line or topic_id in line]
    offsets = [(0, offset) for offset in range(first, first + count)]
    produced, fetched = produce_timings(lines, topic, topic_id), fetch_timings(lines, topic, topic_id)
    produces = [produced[key] for key in offsets if key in produced]
    if len(produces) < count:
        return {"error": f"not available: {len(produces)} of the {count} measured messages' Produce requests were "
                         "found in the brokers' request logs"}
    phases = {PHASE_NAMES[phase]: _mean(produces, phase) for phase in PHASES}
    broker = sum(t.total_ms for t in produces) / count
    fetches = [fetched[key] for key in offsets if key in fetched]
    return {"messages": count, "produce_ms": produce_mean_ms, "broker_ms": broker, "client_ms": produce_mean_ms - broker,
            "phases_ms": phases, "residual_ms": broker - sum(phases.values()),
            "e2e": _path(produces, fetches, e2e_mean_ms) if len(fetches) == count else {
                "error": f"not available: {len(fetches)} of the {count} measured messages' deliveries were found in "
                         "the brokers' request logs"}}


def _path(produces: list[RequestTiming], fetches: list[RequestTiming], e2e_mean_ms: float) -> dict:
    """A message's way through the broker: its Produce request queued and appended (and, with acks=all, waiting for
    the followers: the same moment the consumer's waiting fetch can have it), then that fetch's response queued,
    throttled and sent."""
    way = {name: _mean(produces, phase) for name, phase in PRODUCE_PATH.items()}
    way |= {name: _mean(fetches, phase) for name, phase in FETCH_PATH.items()}
    broker = sum(way.values())
    return {"e2e_ms": e2e_mean_ms, "broker_ms": broker, "clients_ms": e2e_mean_ms - broker, "path_ms": way,
            "fetch_wait_ms": _mean(fetches, "remoteTimeMs")}


def _mean(timings: list[RequestTiming], phase: str) -> float:
    return sum(t.phases[phase] for t in timings) / len(timings)


def text(client: str, parts: dict) -> list[str]:
    if "error" in parts:
        return [f"{client}: where the produce time went: {parts['error']}"]
    phases = ", ".join(f"{name} {ms:.2f}" for name, ms in parts["phases_ms"].items() if ms >= 0.005)
    lines = [f"{client}: produce mean {parts['produce_ms']:.2f} ms over {parts['messages']} messages = client and wire "
             f"{parts['client_ms']:.2f} + broker {parts['broker_ms']:.2f} ({phases}; residual "
             f"{parts['residual_ms']:.3f} ms, the broker's rounding)"]
    way = parts.get("e2e", {})
    if "error" in way:
        return lines + [f"{client}: where the e2e time went: {way['error']}"]
    if way:
        steps = ", ".join(f"{name} {ms:.2f}" for name, ms in way["path_ms"].items() if ms >= 0.005)
        lines.append(f"{client}: e2e mean {way['e2e_ms']:.2f} ms = clients and wire {way['clients_ms']:.2f} + broker on "
                     f"the message's way {way['broker_ms']:.2f} ({steps}); the delivering fetch had waited "
                     f"{way['fetch_wait_ms']:.2f} ms for it (its long poll, off the message's way)")
    return lines

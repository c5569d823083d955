"""Where the time went on the broker, for any lab that produces: the broker's own phases of the Produce requests
that carried the measured records (its request logger, `cluster/request_log.py`, on for the run and off after it),
and the client's part, the rest of the measured time.

- The latency lab (one message in flight): each message's Produce request, found by the offset it wrote, against
  the mean produce time; and the message's way to the consumer, its Produce then the fetch that delivered it,
  against the mean e2e time.
- The produce lab at low rates: every Produce request to the run's topic, each weighed by the records it carried,
  against the mean publish latency of those records.

Means, so the parts add up to the measured mean exactly; the residual said is the broker's own rounding (its phases,
each to the microsecond, against its total). Only where kafkabench runs the brokers: on another cluster the request
logs are on its machines, and the breakdown says so instead of guessing.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import TYPE_CHECKING

from kafkabench.cluster.request_log import LOGGER, PHASES, RequestTiming, fetch_timings, produce_timings
from kafkabench.errors import KafkabenchError

if TYPE_CHECKING:  # the text of the phases is drawn without the clients
    from kafkabench.admin import KafkaAdmin
    from kafkabench.cluster.target import Target

QUIET = "WARN"  # the embedded brokers' level for the request logger (cluster/broker_config.py's log4j2)
RESTORE_TIMEOUT_S = 3.0
PHASE_NAMES = {"requestQueueTimeMs": "request queue", "localTimeMs": "local (append)",
               "remoteTimeMs": "remote (followers)", "throttleTimeMs": "throttle",
               "responseQueueTimeMs": "response queue", "sendTimeMs": "send"}
# a message's way through the broker: its Produce queued and appended (and, with acks=all, waiting for the followers:
# the moment the consumer's waiting fetch can have it too), then that fetch's response queued, throttled and sent
PRODUCE_WAY = {"produce: request queue": "requestQueueTimeMs", "produce: append": "localTimeMs",
               "produce: followers": "remoteTimeMs"}
FETCH_WAY = {"fetch: response queue": "responseQueueTimeMs", "fetch: throttle": "throttleTimeMs",
             "fetch: send": "sendTimeMs"}


@contextlib.contextmanager
def request_logging(target: Target, admin: KafkaAdmin, wanted: bool = True) -> Iterator[str | None]:
    """The brokers log every request while the block runs; yields why not, when they cannot (or were not asked)."""
    if not wanted:
        yield "not asked (--no-broker-phases)"
        return
    if not target.broker_logs:
        yield "not available: the brokers' request logs are on their own machines (kafkabench did not start them)"
        return
    switched, why = [], None
    try:
        for broker, _ in target.broker_logs:
            admin.set_broker_logger(broker, LOGGER, "DEBUG")
            switched.append(broker)
    except KafkabenchError as exc:
        why = f"not available: the request logger could not be switched on ({exc})"
    try:
        yield why
    finally:  # briefly: a broker the run lost (killed) comes back at its configured level anyway
        from kafkabench.admin import KafkaAdmin

        with KafkaAdmin(admin.connection, timeout_s=RESTORE_TIMEOUT_S) as quick:
            for broker in switched:
                with contextlib.suppress(KafkabenchError):
                    quick.set_broker_logger(broker, LOGGER, QUIET)


def ping_pong(target: Target, topic: str, topic_id: str, first: int, count: int, produce_mean_ms: float,
              e2e_mean_ms: float) -> dict:
    """The measured messages' (offsets first .. first+count-1 of partition 0) Produce phases and client part, and
    their way through the broker to the consumer."""
    lines = _log_lines(target, topic, topic_id)
    offsets = [(0, offset) for offset in range(first, first + count)]
    produced, fetched = produce_timings(lines, topic, topic_id), fetch_timings(lines, topic, topic_id)
    produces = [produced[key] for key in offsets if key in produced]
    if len(produces) < count:
        return {"error": f"not available: {len(produces)} of the {count} measured messages' Produce requests were "
                         "found in the brokers' request logs"}
    fetches = [fetched[key] for key in offsets if key in fetched]
    return {**_parts(produces, [1] * count, produce_mean_ms, "produce_ms"),
            "e2e": _way(produces, fetches, e2e_mean_ms) if len(fetches) == count else {
                "error": f"not available: {len(fetches)} of the {count} measured messages' deliveries were found in "
                         "the brokers' request logs"}}


def streamed(target: Target, topic: str, topic_id: str, ends: dict[int, int], acked: int,
             publish_mean_ms: float) -> dict:
    """Every Produce request to `topic`, weighed by the records it carried (up to the next request's base offset in
    its partition, the last up to the partition's end offset `ends`), against the mean publish latency of the run's
    `acked` records: only when the requests logged carried exactly those records."""
    found = produce_timings(_log_lines(target, topic, topic_id), topic, topic_id)
    timings, weights = [], []
    for partition, end in ends.items():
        bases = sorted(offset for p, offset in found if p == partition)
        for base, following in zip(bases, [*bases[1:], end]):
            timings.append(found[(partition, base)])
            weights.append(following - base)
    if sum(weights) != acked:
        return {"error": f"not available: the Produce requests the brokers logged carried {sum(weights):,} records, "
                         f"the run's producers had {acked:,} acknowledged (another producer, or retries, wrote to "
                         "the topic too)"}
    return {**_parts(timings, weights, publish_mean_ms, "publish_ms"), "requests": len(timings)}


def _log_lines(target: Target, topic: str, topic_id: str) -> list[str]:
    lines = []
    for _, path in target.broker_logs:
        with contextlib.suppress(OSError):
            with open(path, errors="replace") as log:
                lines += [line for line in log if topic in line or topic_id in line]
    return lines


def _parts(timings: list[RequestTiming], weights: list[int], mean_ms: float, measured: str) -> dict:
    phases = {PHASE_NAMES[phase]: _mean(timings, weights, phase) for phase in PHASES}
    broker = sum(t.total_ms * w for t, w in zip(timings, weights)) / sum(weights)
    return {"messages": sum(weights), measured: mean_ms, "broker_ms": broker, "client_ms": mean_ms - broker,
            "phases_ms": phases, "residual_ms": broker - sum(phases.values())}


def _way(produces: list[RequestTiming], fetches: list[RequestTiming], e2e_mean_ms: float) -> dict:
    ones = [1] * len(produces)
    way = {name: _mean(produces, ones, phase) for name, phase in PRODUCE_WAY.items()}
    way |= {name: _mean(fetches, ones, phase) for name, phase in FETCH_WAY.items()}
    broker = sum(way.values())
    return {"e2e_ms": e2e_mean_ms, "broker_ms": broker, "clients_ms": e2e_mean_ms - broker, "path_ms": way,
            "fetch_wait_ms": _mean(fetches, ones, "remoteTimeMs")}


def _mean(timings: list[RequestTiming], weights: list[int], phase: str) -> float:
    return sum(t.phases[phase] * w for t, w in zip(timings, weights)) / sum(weights)


def text(client: str, parts: dict) -> list[str]:
    """The breakdown as the terminal and the report say it."""
    if "error" in parts:
        return [f"{client}: where the produce time went: {parts['error']}"]
    phases = ", ".join(f"{name} {ms:.2f}" for name, ms in parts["phases_ms"].items() if ms >= 0.005)
    broker = (f"broker {parts['broker_ms']:.2f} ({phases}; residual {parts['residual_ms']:.3f} ms, the broker's "
              "rounding)")
    if "publish_ms" in parts:
        return [f"{client}: publish latency mean {parts['publish_ms']:.2f} ms over {parts['messages']:,} records in "
                f"{parts['requests']:,} Produce requests = client and wire {parts['client_ms']:.2f} (its batching wait, "
                f"linger.ms, included) + {broker}"]
    lines = [f"{client}: produce mean {parts['produce_ms']:.2f} ms over {parts['messages']} messages = client and wire "
             f"{parts['client_ms']:.2f} + {broker}"]
    way = parts.get("e2e", {})
    if "error" in way:
        return lines + [f"{client}: where the e2e time went: {way['error']}"]
    if way:
        steps = ", ".join(f"{name} {ms:.2f}" for name, ms in way["path_ms"].items() if ms >= 0.005)
        lines.append(f"{client}: e2e mean {way['e2e_ms']:.2f} ms = clients and wire {way['clients_ms']:.2f} + broker on "
                     f"the message's way {way['broker_ms']:.2f} ({steps}); the delivering fetch had waited "
                     f"{way['fetch_wait_ms']:.2f} ms for it (its long poll, off the message's way)")
    return lines

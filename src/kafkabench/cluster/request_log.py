"""The broker's own timing of every request it answers, from its request logger.

With the logger `kafka.request.logger` at DEBUG (set at run time, `KafkaAdmin.set_broker_logger`), a broker writes one
"Completed request:" line per request: its header, a summary of the request and the response (for a Produce: each
partition's base offset, so a message's own request is found by its offset), and the phases it timed, in
milliseconds to the microsecond: request queue, local (the append, or the read), remote (waiting for followers, or
a fetch waiting for data), throttle, response queue, send; and their total. The total starts once the whole request
was read from the socket: a large request's transfer is the client's side, not the broker's.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass

LOGGER = "kafka.request.logger"
MARKER = "Completed request:"
PHASES = ("requestQueueTimeMs", "localTimeMs", "remoteTimeMs", "throttleTimeMs", "responseQueueTimeMs", "sendTimeMs")


@dataclass(frozen=True)
class RequestTiming:
    api: str  # PRODUCE, FETCH, ...
    client_id: str
    correlation_id: int
    total_ms: float
    phases: dict[str, float]  # PHASES -> ms; they add up to total_ms (as each is rounded to the microsecond)
    offsets: tuple[tuple[str, int, int], ...] = ()  # a Produce's (topic name or id, partition, base offset) written


def parse(line: str) -> RequestTiming | None:
    """The timing a request logger line holds; None for any other line (or one cut short)."""
    start = line.find(MARKER)
    if start < 0:
        return None
    text = line[start + len(MARKER):]
    try:
        entry = json.loads(text[:text.rindex("}") + 1])
        header = entry["requestHeader"]
        phases = {phase: float(entry[phase]) for phase in PHASES}
        total = float(entry["totalTimeMs"])
    except (ValueError, KeyError, TypeError):
        return None
    offsets = tuple((topic.get("name") or topic.get("topicId", ""), partition["index"], partition["baseOffset"])
                    for topic in (entry.get("response") or {}).get("responses", [])
                    for partition in topic.get("partitionResponses", [])
                    if header.get("requestApiKeyName") == "PRODUCE" and partition.get("errorCode") == 0)
    return RequestTiming(header.get("requestApiKeyName", ""), header.get("clientId", ""), header.get("correlationId", -1),
                         total, phases, offsets)


def produce_timings(lines: Iterable[str], topic: str, topic_id: str | None = None) -> dict[tuple[int, int], RequestTiming]:
    """Each successful Produce to `topic` (named, or by `topic_id` as Produce v13 and later name it), by (partition,
    base offset): the request that wrote the record there."""
    found = {}
    for line in lines:
        if MARKER in line and (timing := parse(line)) is not None:
            for name, partition, offset in timing.offsets:
                if name in (topic, topic_id):
                    found[(partition, offset)] = timing
    return found

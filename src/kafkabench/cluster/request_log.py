"""The broker's own timing of every request it answers, from its request logger.

With the logger `kafka.request.logger` at DEBUG (set at run time, `KafkaAdmin.set_broker_logger`), a broker writes one
"Completed request:" line per request: its header, a summary of the request and the response (for a Produce: each
partition's base offset, so a message's own request is found by its offset; for a Fetch: each partition's fetch
offset and the size of the records it returned, so the fetch that delivered a message is found too), and the phases
it timed, in
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
    connection: str = ""
    written: tuple[tuple[str, int, int], ...] = ()  # a Produce's (topic name or id, partition, base offset)
    # a consumer's Fetch: (topic, partition, fetch offset) asked (a fetch session leaves out a partition whose offset
    # did not change), and (topic, partition) that came back with records
    asked: tuple[tuple[str, int, int], ...] = ()
    delivered: tuple[tuple[str, int], ...] = ()


def parse(line: str) -> RequestTiming | None:
    """The timing a request logger line holds; None for any other line (or one cut short)."""
    start = line.find(MARKER)
    if start < 0:
        return None
    text = line[start + len(MARKER):]
    try:
        return _timing(json.loads(text[:text.rindex("}") + 1]))
    except (ValueError, KeyError, TypeError, AttributeError):
        return None


def _timing(entry: dict) -> RequestTiming:
    header = entry["requestHeader"]
    phases = {phase: float(entry[phase]) for phase in PHASES}
    api = header.get("requestApiKeyName", "")
    request, response = entry.get("request") or {}, entry.get("response") or {}
    written = asked = delivered = ()
    if api == "PRODUCE":
        written = tuple((_topic(topic), partition["index"], partition["baseOffset"])
                        for topic in response.get("responses", []) for partition in topic.get("partitionResponses", [])
                        if partition.get("errorCode") == 0)
    elif api == "FETCH" and _replica(request) < 0:  # a consumer's, not a follower's
        asked = tuple((_topic(topic), partition["partition"], partition["fetchOffset"])
                      for topic in request.get("topics", []) for partition in topic.get("partitions", []))
        delivered = tuple((_topic(topic), partition["partitionIndex"])
                          for topic in response.get("responses", []) for partition in topic.get("partitions", [])
                          if partition.get("errorCode") == 0 and partition.get("recordsSizeInBytes", 0) > 0)
    return RequestTiming(api, header.get("clientId", ""), header.get("correlationId", -1), float(entry["totalTimeMs"]),
                         phases, entry.get("connection", ""), written, asked, delivered)


def _topic(entry: dict) -> str:
    return entry.get("name") or entry.get("topic") or entry.get("topicId", "")


def _replica(request: dict) -> int:
    """The fetching replica's id (Fetch v15 and later carry it in `replicaState`); -1 for a consumer."""
    if "replicaId" in request:
        return request["replicaId"]
    return (request.get("replicaState") or {}).get("replicaId", -1)


def produce_timings(lines: Iterable[str], topic: str, topic_id: str | None = None) -> dict[tuple[int, int], RequestTiming]:
    """Each successful Produce to `topic` (named, or by `topic_id` as Produce v13 and later name it), by (partition,
    base offset): the request that wrote the record there."""
    found = {}
    for line in lines:
        if MARKER in line and (timing := parse(line)) is not None:
            for name, partition, offset in timing.written:
                if name in (topic, topic_id):
                    found[(partition, offset)] = timing
    return found


def fetch_timings(lines: Iterable[str], topic: str, topic_id: str | None = None) -> dict[tuple[int, int], RequestTiming]:
    """The consumer fetch that delivered each record of `topic`, by (partition, offset): the first that came back with
    records from that fetch offset. Read in the brokers' order of completion; a fetch that leaves a partition out (a
    fetch session's unchanged offset) asked for the offset its connection asked for last."""
    found: dict[tuple[int, int], RequestTiming] = {}
    last: dict[tuple[str, int], int] = {}  # (connection, partition) -> the offset asked for last
    for line in lines:
        if MARKER not in line or (timing := parse(line)) is None or timing.api != "FETCH":
            continue
        for name, partition, offset in timing.asked:
            if name in (topic, topic_id):
                last[(timing.connection, partition)] = offset
        for name, partition in timing.delivered:
            if name in (topic, topic_id) and (timing.connection, partition) in last:
                found.setdefault((partition, last[(timing.connection, partition)]), timing)
    return found

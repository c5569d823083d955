"""Consumer lag of every consumer group (or those matching `--groups`), polled every interval through the admin API:
committed offsets, members, and each partition's end offset, turned into lag in offsets, lag in seconds and a
status (labs.monitor.lag). State is kept per (group, topic, partition) in fixed-size rings, and dropped with its
metrics when a group or partition goes away, so memory stays flat over days.

Committed offsets and members are asked through kafka-python: these requests go to each group's coordinator, and
librdkafka's admin client can abort the process when that coordinator's connection is down (librdkafka issue 4605,
reproduced by benchmarks/librdkafka_4605.py). Listing groups and end offsets stay on librdkafka. Each poll asks for
every group at once (one OffsetFetch and one DescribeGroups per coordinator, KIP-709); an error in such a batch fails
all of it, so that poll then asks group by group and only the failing group goes without
(benchmarks/monitor_lag_polls.py).
"""

from __future__ import annotations

import re
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

from confluent_kafka import KafkaException, TopicPartition
from confluent_kafka.admin import AdminClient, OffsetSpec
from kafka.admin import KafkaAdminClient
from kafka.errors import KafkaError

from kafkabench.admin import quiet_client_config
from kafkabench.connection import Connection
from kafkabench.labs.monitor.lag import EndOffsets, Poll, group_status, partition_status
from kafkabench.labs.monitor.metrics import Recorder

HISTORY = 3600  # end-offset samples per partition (an idle stretch keeps two): an hour at a 1 s interval
TIMEOUT_S = 10.0
MONITOR_GROUPS = re.compile(r"^kafkabench-monitor-[0-9a-f]{16}$")  # monitors' own groups are probes, not consumers
LAG_MIN_INTERVAL_S = 1.0  # lag is polled at most once a second: a few admin requests per coordinator a poll


@dataclass
class GroupLag:
    lag: int
    lag_seconds: float | None
    at_least: bool  # lag_seconds is a lower bound
    status: str
    members: int

    def to_dict(self) -> dict:
        return {"lag": self.lag, "lag_seconds": self.lag_seconds, "lag_seconds_at_least": self.at_least,
                "status": self.status, "members": self.members}


class LagCollector:
    """Polled by the lag part's loop (`run`), in a process of its own: an admin call to a broker that is down
    waits out its timeout there, never in the probe loop."""

    def __init__(self, bootstrap: str | Connection, patterns: list[str], exclude: re.Pattern, window: int,
                 metrics: Recorder) -> None:
        self._connection = bootstrap if isinstance(bootstrap, Connection) else Connection(bootstrap)
        self._admin = AdminClient(quiet_client_config(self._connection))
        self._groups_admin: KafkaAdminClient | None = None  # made at the first poll that can reach a broker
        self._patterns = [re.compile(pattern) for pattern in patterns]
        self._exclude, self._window, self._metrics = exclude, window, metrics
        self._ends: dict[tuple[str, int], EndOffsets] = {}
        self._polls: dict[tuple[str, str, int], deque] = {}

    def close(self) -> None:
        if self._groups_admin is not None:
            self._groups_admin.close()

    def _groups_client(self) -> KafkaAdminClient | None:
        """kafka-python's admin client, made when a broker answers its bootstrap (on a loaded machine, or with a
        broker down, a first try can fail: the next poll tries again, the part goes on)."""
        if self._groups_admin is None:
            try:
                self._groups_admin = KafkaAdminClient(bootstrap_servers=self._connection.bootstrap_servers.split(","),
                                                      request_timeout_ms=int(TIMEOUT_S * 1000),
                                                      **self._connection.kafka_python())
            except KafkaError:
                return None
        return self._groups_admin

    def collect(self, now_s: float) -> dict[str, GroupLag]:
        groups = self._groups()
        committed = self._committed(groups)
        members = self._members(groups)
        ends = self._end_offsets({key for offsets in committed.values() for key in offsets})
        for key, end in ends.items():
            self._ends.setdefault(key, EndOffsets(HISTORY)).add(now_s, end)
            self._metrics.topic_offset.labels(key[0], str(key[1])).set(end)
        found = {group: self._group(group, offsets, ends, members.get(group, 0), now_s)
                 for group, offsets in committed.items()}
        self._forget({(g, *key) for g, offsets in committed.items() for key in offsets}, set(ends))
        return found

    def _group(self, group: str, offsets: dict, ends: dict, members: int, now_s: float) -> GroupLag:
        statuses, total, ages = [], 0, []
        per_topic: dict[str, int] = {}
        for (topic, partition), offset in sorted(offsets.items()):
            end = ends.get((topic, partition))
            if end is None:
                continue
            lag = max(0, end - offset)
            polls = self._polls.setdefault((group, topic, partition), deque(maxlen=self._window))
            polls.append(Poll(now_s, offset, lag))
            statuses.append(partition_status(list(polls), members))
            age = self._ends[(topic, partition)].lag_seconds(offset, now_s)
            labels = (group, topic, str(partition))
            self._metrics.lag.labels(*labels).set(lag)
            self._metrics.current_offset.labels(*labels).set(offset)
            if age is not None:
                self._metrics.lag_seconds.labels(*labels).set(age.seconds)
                ages.append(age)
            total += lag
            per_topic[topic] = per_topic.get(topic, 0) + lag
        for topic, lag in per_topic.items():
            self._metrics.lag_sum.labels(group, topic).set(lag)
        status = group_status(statuses)
        self._metrics.members.labels(group).set(members)
        self._metrics.set_status(group, status)
        oldest = max(ages, key=lambda age: age.seconds, default=None)
        return GroupLag(total, oldest.seconds if oldest else None, bool(oldest and oldest.at_least), status, members)

    def _groups(self) -> list[str]:
        try:
            listed = self._admin.list_consumer_groups(request_timeout=TIMEOUT_S).result(timeout=TIMEOUT_S + 5).valid
        except KafkaException:
            return []
        names = sorted(listing.group_id for listing in listed if not self._exclude.match(listing.group_id))
        return [name for name in names if not self._patterns or any(p.search(name) for p in self._patterns)]

    def _committed(self, groups: list[str]) -> dict[str, dict[tuple[str, int], int]]:
        found = self._ask_all(groups, lambda client, asked: client.list_group_offsets(dict.fromkeys(asked)))
        return {group: {(tp.topic, tp.partition): meta.offset for tp, meta in found.get(group, {}).items()
                        if meta.offset >= 0} for group in groups}

    def _members(self, groups: list[str]) -> dict[str, int]:
        described = self._ask_all(groups, lambda client, asked: client.describe_groups(asked))
        return {group: len(found.get("members") or []) for group, found in described.items()
                if found is not None and not found.get("error")}

    def _ask_all(self, groups: list[str], ask: Callable[[KafkaAdminClient, list[str]], dict]) -> dict:
        """`ask` of every group in one call; when that call fails (kafka-python raises at a batch's first error: a
        coordinator down, one group's offsets unstable), of each group alone, the ones that fail left out."""
        client = self._groups_client()
        if client is None or not groups:
            return {}
        try:
            return ask(client, groups)
        except KafkaError:
            return self._ask_each(groups, ask)

    def _ask_each(self, groups: list[str], ask: Callable[[KafkaAdminClient, list[str]], dict]) -> dict:
        client, answers = self._groups_client(), {}
        for group in groups if client is not None else ():
            try:
                answers.update(ask(client, [group]))
            except KafkaError:
                continue
        return answers

    def _end_offsets(self, keys: set[tuple[str, int]]) -> dict[tuple[str, int], int]:
        if not keys:
            return {}
        futures = self._admin.list_offsets({TopicPartition(t, p): OffsetSpec.latest() for t, p in keys},
                                           request_timeout=TIMEOUT_S)
        ends = {}
        for tp, future in futures.items():
            try:
                ends[(tp.topic, tp.partition)] = future.result(timeout=TIMEOUT_S + 5).offset
            except KafkaException:
                continue  # its leader is down: no end offset this time, no figure rather than a wrong one
        return ends

    def _forget(self, polled: set[tuple[str, str, int]], ends: set[tuple[str, int]]) -> None:
        """What is no longer there: its state and its metrics' label sets go."""
        for key in [key for key in self._polls if key not in polled]:
            del self._polls[key]
            for gauge in (self._metrics.lag, self._metrics.current_offset, self._metrics.lag_seconds):
                gauge.remove(key[0], key[1], str(key[2]))  # a label set never set is ignored where it is applied
        for key in [key for key in self._ends if key not in ends and not any(k[1:] == key for k in polled)]:
            del self._ends[key]


def run(connection: Connection, scenario, send, stopping: threading.Event) -> None:
    """The lag part: poll every max(interval, LAG_MIN_INTERVAL_S), send each poll's figures, until `stopping`."""
    recorder = Recorder()
    collector = LagCollector(connection, scenario.groups, MONITOR_GROUPS, scenario.lag_window, recorder)
    every = max(scenario.interval, LAG_MIN_INTERVAL_S)
    try:
        while not stopping.is_set():
            begun = time.monotonic()
            groups = collector.collect(begun)
            send({"kind": "lag", "groups": {group: lag.to_dict() for group, lag in groups.items()},
                  "metrics": recorder.take()})
            stopping.wait(max(0.0, every - (time.monotonic() - begun)))
    finally:
        collector.close()

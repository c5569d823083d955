"""The end-to-end probe: every interval one probe per partition of the probe topic, read back by a consumer in the
same process, so send and read are timed on one monotonic clock.

A round's probes are spread evenly over the interval rather than sent together: on a small machine three probes at
once wake every broker at once and measure their contention (a roundtrip p50 of 4-5 ms against 2.4-2.8 ms spread,
3 brokers on 2 cores), which no single client of the cluster sees. The producer's answers are served by a thread of
their own, so a produce latency is when the acknowledgement came, never when a consumer poll let the loop see it.

A probe's value is (instance id, partition, sequence, send time in ns, the partition's leader when it was sent): the
instance id tells this monitor's probes from another's on the same topic; the leader labels every figure of the
probe (`broker_id`), even when leadership moves before it is read. The producer writes with acks=all and no
linger, each probe giving up after the SLA (`message.timeout.ms`); the consumer reads every partition from its end
at the start, in a group of this instance's own, and commits its position every interval (the commit is timed,
labelled with the group's coordinator); the group is deleted when the watch ends.

No coordinator-bound request goes through librdkafka's admin client: DescribeConsumerGroups and DeleteConsumerGroups
there can abort the process when the coordinator's connection is down (librdkafka issue 4605, reproduced by
benchmarks/librdkafka_4605.py). The coordinator is read from metadata the way the broker finds it (the leader of
`__consumer_offsets` partition abs(hashCode(group)) % partitions) and the group is deleted through kafka-python.

Per window (one interval) `take_window` hands out what the terminal, `--json-lines` and the result show: per broker
the probes sent, acknowledged, read back within the SLA, lost, duplicated and out of order, roundtrip p50/p99, and
availability (probes decided in the last AVAILABILITY_S: read back within the SLA / read back or lost).
"""

from __future__ import annotations

import math
import struct
import threading
import time
import uuid
from collections import deque
from dataclasses import dataclass, field

from confluent_kafka import Consumer, KafkaException, Producer, TopicPartition

from kafkabench.admin import KafkaAdmin, quiet_client_config
from kafkabench.connection import Connection
from kafkabench.errors import KafkaAdminError
from kafkabench.labs.monitor.metrics import MonitorMetrics, Recorder
from kafkabench.labs.monitor.probe_topic import ensure_probe_topic
from kafkabench.labs.monitor.sequences import SequenceTracker
from kafkabench.waiting import wait_until

PROBE = struct.Struct(">8sIQqi")  # instance, partition, sequence, send time (monotonic ns), leader then
AVAILABILITY_S = 60.0
LEADERS_TIMEOUT_S = 0.5
LEADERS_EVERY_S = 1.0
OFFSETS_TOPIC = "__consumer_offsets"
ANSWERS_POLL_S = 0.1  # the answering thread's wait: it wakes at once for an answer, this bounds its stop
SHAPE_EVERY_S = 30.0
ADMIN_TIMEOUT_S = 10.0


@dataclass
class BrokerWindow:
    sent: int = 0
    acked: int = 0
    received: int = 0
    lost: int = 0
    duplicated: int = 0
    out_of_order: int = 0
    failed: int = 0
    availability: float | None = None
    roundtrip_us: list[int] = field(default_factory=list)  # a few per window: kept whole, percentiles exact

    COUNTS = ("sent", "acked", "received", "lost", "failed", "duplicated", "out_of_order")

    def to_message(self) -> dict:
        """Everything, for the serving process: BrokerWindow(**message) again there."""
        return {**{name: getattr(self, name) for name in self.COUNTS}, "availability": self.availability,
                "roundtrip_us": self.roundtrip_us}

    def add(self, other: BrokerWindow) -> None:
        """`other`'s counts and roundtrips added to these; its availability, the later one, kept."""
        for name in self.COUNTS:
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.roundtrip_us += other.roundtrip_us
        self.availability = other.availability if other.availability is not None else self.availability

    def to_dict(self) -> dict:
        ordered = sorted(self.roundtrip_us)
        return {**{name: getattr(self, name) for name in self.COUNTS}, "availability": self.availability,
                "roundtrip_p50_ms": nearest_rank_ms(ordered, 0.50), "roundtrip_p99_ms": nearest_rank_ms(ordered, 0.99)}


def coordinator_partition(group: str, partitions: int) -> int:
    """The `__consumer_offsets` partition whose leader coordinates `group`: Kafka's Utils.abs(group.hashCode()) %
    partitions, with Java's String.hashCode over UTF-16 code units."""
    code = 0
    units = group.encode("utf-16-be")
    for i in range(0, len(units), 2):
        code = (31 * code + int.from_bytes(units[i:i + 2], "big")) & 0xFFFFFFFF
    signed = code - (1 << 32) if code >= 1 << 31 else code
    return (0 if signed == -(1 << 31) else abs(signed)) % partitions


def nearest_rank_ms(ordered_us: list[int], quantile: float) -> float | None:
    """The least value with at least `quantile` of all at or below it (as HdrHistogram reads a percentile)."""
    if not ordered_us:
        return None
    return ordered_us[max(0, math.ceil(quantile * len(ordered_us)) - 1)] / 1000


class Prober:
    def __init__(self, bootstrap: str | Connection, topic: str, sla_s: float, interval_s: float,
                 metrics: MonitorMetrics | Recorder, clock=time.monotonic_ns) -> None:
        self.topic, self.sla_s, self.metrics, self.clock = topic, sla_s, metrics, clock
        self.instance = uuid.uuid4().bytes[:8]
        self.group = f"kafkabench-monitor-{self.instance.hex()}"
        self.connection = bootstrap if isinstance(bootstrap, Connection) else Connection(bootstrap)
        self.tracker = SequenceTracker(sla_s, span=int(sla_s / interval_s) + 16)
        self.leaders: dict[int, int] = {}
        self._windows: dict[int, BrokerWindow] = {}
        self._decided: dict[int, deque] = {}  # broker -> (time_s, read in time) of the last AVAILABILITY_S
        self._in_time: dict[int, int] = {}  # broker -> how many of those were read in time
        self._producer = Producer(quiet_client_config(bootstrap, **{
            "acks": "all", "linger.ms": 0, "message.timeout.ms": int(sla_s * 1000)}))
        self._answers: deque[tuple[int, str | None]] = deque()  # (leader, error name): appended by the answering thread
        self._answering = threading.Event()
        self._answerer = threading.Thread(target=self._serve_answers, name="probe-answers", daemon=True)
        self._answerer.start()
        self._commit_sent_ns: int | None = None
        self._leaders_due_ns = 0
        self._consumer = Consumer(quiet_client_config(bootstrap, **{
            "group.id": self.group, "enable.auto.commit": False, "enable.partition.eof": False,
            "on_commit": self._committed}))
        self.coordinator = -1

    def watch(self, leaders: dict[int, int], timeout_s: float = 10) -> None:
        """The probe topic's partitions and their leaders now; a new partition is read from the end offset it has
        now, looked up before any probe is sent to it, so none is missed."""
        new = sorted(set(leaders) - set(self.leaders))
        starts = [TopicPartition(self.topic, p, self._end_offset(p, timeout_s)) for p in new]
        if starts:
            self._consumer.incremental_assign(starts)
        self.leaders = dict(leaders)

    def _end_offset(self, partition: int, timeout_s: float) -> int:
        """Asked again while the partition's leader does not know it yet (a topic just created)."""
        def ask() -> tuple[int] | None:  # a tuple: offset 0 is an answer too
            try:
                return (self._consumer.get_watermark_offsets(TopicPartition(self.topic, partition), timeout=1)[1],)
            except KafkaException:
                return None

        return wait_until(ask, timeout_s=timeout_s, what=f"the end offset of {self.topic}[{partition}]",
                          interval_s=0.1)[0]

    def probe(self, until_ns: int) -> None:
        """One probe per partition, spread evenly until `until_ns`, reading back and expiring in between; each is
        labelled with its partition's leader as the producer's metadata has it (looked up every LEADERS_EVERY_S)."""
        if self.clock() >= self._leaders_due_ns:
            self._leaders_due_ns = self.clock() + int(LEADERS_EVERY_S * 1e9)
            self._refresh_leaders()
        partitions = sorted(self.leaders.items())
        start = self.clock()
        step = (until_ns - start) // max(1, len(partitions))
        for index, (partition, leader) in enumerate(partitions):
            self.serve(start + index * step)
            self._send(partition, leader)
        self.serve(until_ns)

    def _send(self, partition: int, leader: int) -> None:
        sent_ns = self.clock()
        sequence = self.tracker.sent(partition, sent_ns / 1e9, leader)
        value = PROBE.pack(self.instance, partition, sequence, sent_ns, leader)
        labels = (str(partition), str(leader))
        self.metrics.produced.labels(*labels).inc()
        self._window(leader).sent += 1
        try:
            self._producer.produce(self.topic, value, partition=partition,
                                   on_delivery=lambda err, _msg, at=sent_ns, labels=labels: self._answered(err, at, labels))
        except (BufferError, KafkaException) as exc:
            self._failed(labels, type(exc).__name__)
            self._window(leader).failed += 1

    def _refresh_leaders(self) -> None:
        try:
            topic = self._producer.list_topics(self.topic, timeout=LEADERS_TIMEOUT_S).topics.get(self.topic)
        except KafkaException:
            return  # no answer in time: the last known leaders label this round
        if topic is not None and topic.error is None:
            for partition, info in topic.partitions.items():
                if partition in self.leaders and info.leader >= 0:
                    self.leaders[partition] = info.leader

    def serve(self, until_ns: int) -> None:
        """Read probes back and serve the producer's answers until `until_ns`."""
        while (left := until_ns - self.clock()) > 0:
            message = self._consumer.poll(min(left / 1e9, 0.01))  # returns with the first record: consume() would
            if message is not None and message.error() is None:  # wait for a whole batch or its timeout
                self._read(message.value(), self.clock())
        self._count_answers()
        self._expire()

    def commit(self) -> None:
        """Commit the consumer's position asynchronously; its answer, served while reading, times the offset-commit
        latency of the group's coordinator. One commit at a time: a coordinator that does not answer holds none up."""
        if self._commit_sent_ns is not None:
            return
        try:
            self._consumer.commit(asynchronous=True)
        except KafkaException:
            return  # nothing consumed yet: nothing to commit
        self._commit_sent_ns = self.clock()

    def _committed(self, error, _partitions) -> None:
        if self._commit_sent_ns is not None and error is None:
            self.metrics.commit_latency.labels(str(self.coordinator)).observe((self.clock() - self._commit_sent_ns) / 1e9)
        self._commit_sent_ns = None

    def find_coordinator(self) -> None:
        """Which broker coordinates this instance's group now (the commit latency's label); -1 until known."""
        try:
            offsets = self._producer.list_topics(OFFSETS_TOPIC, timeout=LEADERS_TIMEOUT_S * 4).topics.get(OFFSETS_TOPIC)
        except KafkaException:
            return
        if offsets is not None and offsets.error is None and offsets.partitions:
            leader = offsets.partitions[coordinator_partition(self.group, len(offsets.partitions))].leader
            self.coordinator = leader if leader >= 0 else self.coordinator

    def take_window(self) -> dict[int, BrokerWindow]:
        """broker -> its figures since the last take, availability set."""
        now_s = self.clock() / 1e9
        windows, self._windows = self._windows, {}
        for broker in sorted(set(windows) | set(self._decided)):
            window = windows.setdefault(broker, BrokerWindow())
            window.availability = self._availability(broker, now_s)
            if window.availability is not None:
                self.metrics.availability.labels(str(broker)).set(window.availability)
        return dict(sorted(windows.items()))

    def close(self) -> None:
        """Close both clients and delete this instance's group: a watch leaves no lagging group behind."""
        self._answering.set()
        self._answerer.join()
        self._producer.flush(1)
        self._consumer.close()
        from kafka.admin import KafkaAdminClient  # kafka-python: a coordinator-bound request (see the module's doc)
        from kafka.errors import KafkaError

        try:
            admin = KafkaAdminClient(bootstrap_servers=self.connection.bootstrap_servers.split(","),
                                     request_timeout_ms=5000, **self.connection.kafka_python())
            try:
                admin.delete_groups([self.group])
            finally:
                admin.close()
        except KafkaError:
            pass  # never committed (no group), or the coordinator is down: nothing more to do

    def _serve_answers(self) -> None:
        while not self._answering.is_set():
            self._producer.poll(ANSWERS_POLL_S)

    def _answered(self, error, sent_ns: int, labels: tuple[str, str]) -> None:
        """On the answering thread: the metrics (thread-safe) at once, the window's counts through `_answers`."""
        if error is not None:
            self._failed(labels, error.name())
        else:
            self.metrics.acked.labels(*labels).inc()
            self.metrics.produce_latency.labels(*labels).observe((self.clock() - sent_ns) / 1e9)
        self._answers.append((int(labels[1]), None if error is None else error.name()))

    def _count_answers(self) -> None:
        while self._answers:
            leader, error = self._answers.popleft()
            window = self._window(leader)
            if error is None:
                window.acked += 1
            else:
                window.failed += 1

    def _failed(self, labels: tuple[str, str], error: str) -> None:
        self.metrics.produce_failed.labels(*labels).inc()
        self.metrics.produce_errors.labels(error).inc()

    def _read(self, value: bytes | None, read_ns: int) -> None:
        if value is None or len(value) != PROBE.size:
            return
        instance, partition, sequence, sent_ns, leader = PROBE.unpack(value)
        if instance != self.instance:
            return  # another monitor's probe
        counts = self.tracker.counts(partition)
        before = (counts.duplicated, counts.out_of_order, counts.late)
        trip = self.tracker.read(partition, sequence, read_ns / 1e9, sent_ns / 1e9)
        labels, window = (str(partition), str(leader)), self._window(leader)
        duplicated, out_of_order, late = (now - then for now, then in
                                          zip((counts.duplicated, counts.out_of_order, counts.late), before))
        for metric, count in ((self.metrics.duplicated, duplicated), (self.metrics.out_of_order, out_of_order),
                              (self.metrics.late, late)):
            if count:
                metric.labels(*labels).inc(count)
        window.duplicated += duplicated
        window.out_of_order += out_of_order
        if trip is not None:
            self.metrics.received.labels(*labels).inc()
            self.metrics.roundtrip_latency.labels(*labels).observe(trip.seconds)
            window.received += 1
            window.roundtrip_us.append(round(trip.seconds * 1e6))
            self._decide(leader, read_ns / 1e9, True)

    def _expire(self) -> None:
        now_s = self.clock() / 1e9
        for partition, _, leader in self.tracker.expire(now_s):
            self.metrics.lost.labels(str(partition), str(leader)).inc()
            self._window(leader).lost += 1
            self._decide(leader, now_s, False)

    def _decide(self, broker: int, at_s: float, in_time: bool) -> None:
        self._decided.setdefault(broker, deque()).append((at_s, in_time))
        self._in_time[broker] = self._in_time.get(broker, 0) + in_time

    def _availability(self, broker: int, now_s: float) -> float | None:
        decided = self._decided.get(broker)
        while decided and now_s - decided[0][0] > AVAILABILITY_S:
            self._in_time[broker] -= decided.popleft()[1]
        return self._in_time[broker] / len(decided) if decided else None

    def _window(self, broker: int) -> BrokerWindow:
        window = self._windows.get(broker)
        if window is None:
            window = self._windows[broker] = BrokerWindow()
        return window


def run(connection: Connection, scenario, send, stopping: threading.Event) -> None:
    """The prober part: a window of probes per interval, sent with the metrics it moved, until `stopping`. The
    probe topic is brought back in shape (a partition led by each broker) every SHAPE_EVERY_S."""
    recorder = Recorder()
    prober = Prober(connection, scenario.probe_topic, scenario.sla, scenario.interval, recorder)
    try:
        _reshape(prober, connection, scenario.probe_topic, recorder)
        tick = next_shape = time.monotonic()
        next_shape += SHAPE_EVERY_S
        while not stopping.is_set():
            tick += scenario.interval
            prober.probe(int(tick * 1e9))
            prober.commit()
            windows = prober.take_window()
            send({"kind": "probes", "brokers": {broker: window.to_message() for broker, window in windows.items()},
                  "leaders": prober.leaders, "metrics": recorder.take()})
            if time.monotonic() >= next_shape:
                _reshape(prober, connection, scenario.probe_topic, recorder)
                next_shape = time.monotonic() + SHAPE_EVERY_S
    finally:
        prober.close()


def _reshape(prober: Prober, connection: Connection, topic: str, metrics: Recorder) -> None:
    try:
        with KafkaAdmin(connection, timeout_s=ADMIN_TIMEOUT_S) as admin:
            info = ensure_probe_topic(admin, topic)
    except KafkaAdminError:
        if not prober.leaders:
            raise
        return  # a broker is down: the topic keeps its shape until the next look
    for p in info.partitions:
        metrics.know_partition(p.partition, list(p.replicas))
    prober.watch({p.partition: p.leader if p.leader is not None else p.replicas[0] for p in info.partitions})
    prober.find_coordinator()

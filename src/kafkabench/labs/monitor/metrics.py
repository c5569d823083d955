"""The monitor's Prometheus metrics, in a registry of their own (prometheus_client), kept by the process that serves
them; the parts that measure run in processes of their own and send what they did as operations (`Recorder`).

Probe metrics are named like KMinion's end-to-end metrics, under the `kafkabench_` namespace, labelled
`partition_id` and `broker_id` (the partition's leader when the probe was sent). Their counters exist at 0 for every
(partition, replica) as soon as the partition is known, so the first loss is an increase an alert sees. Consumer lag
keeps kafka_exporter's names, so dashboards built for it work unchanged, plus lag in seconds and a Burrow-style
status. Broker liveness (`broker_up`) and the monitor's own part restarts complete them. Latency buckets reach from a
tenth of a millisecond (loopback) to a minute (an outage).
"""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest

BUCKETS_S = (0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
             20.0, 30.0, 60.0)
PROBE = ("partition_id", "broker_id")
LAG = ("consumergroup", "topic", "partition")
STATUSES = ("OK", "WARNING", "REWIND", "STALL", "STOP")


class MonitorMetrics:
    def __init__(self) -> None:
        self.registry = registry = CollectorRegistry(auto_describe=True)
        ns = "kafkabench"
        self.produced = Counter("end_to_end_messages_produced", "Probes handed to the producer", PROBE, namespace=ns,
                                registry=registry)
        self.acked = Counter("end_to_end_messages_acked", "Probes acknowledged", PROBE, namespace=ns, registry=registry)
        self.produce_failed = Counter("end_to_end_messages_produced_failed", "Probes the producer reported failed",
                                      PROBE, namespace=ns, registry=registry)
        self.produce_errors = Counter("end_to_end_produce_errors", "Probes the producer reported failed, by error",
                                      ("error",), namespace=ns, registry=registry)
        self.received = Counter("end_to_end_messages_received", "Probes read back (first reads)", PROBE,
                                namespace=ns, registry=registry)
        self.lost = Counter("end_to_end_messages_lost", "Probes not read back within the SLA", PROBE, namespace=ns,
                            registry=registry)
        self.late = Counter("end_to_end_messages_late", "Probes read back after their SLA (counted lost before)", PROBE,
                            namespace=ns, registry=registry)
        self.duplicated = Counter("end_to_end_messages_duplicated", "Probes read back more than once", PROBE,
                                  namespace=ns, registry=registry)
        self.out_of_order = Counter("end_to_end_messages_out_of_order", "Probes first read after a later one of their "
                                    "partition", PROBE, namespace=ns, registry=registry)
        self.produce_latency = Histogram("end_to_end_produce_latency_seconds", "Probe send -> acknowledgement",
                                         PROBE, namespace=ns, buckets=BUCKETS_S, registry=registry)
        self.roundtrip_latency = Histogram("end_to_end_roundtrip_latency_seconds", "Probe send -> read back, one "
                                           "monotonic clock", PROBE, namespace=ns, buckets=BUCKETS_S, registry=registry)
        self.commit_latency = Histogram("end_to_end_offset_commit_latency_seconds", "The probe consumer's offset "
                                        "commit", ("coordinator_id",), namespace=ns, buckets=BUCKETS_S, registry=registry)
        self.availability = Gauge("end_to_end_availability", "Share of the last window's probes acknowledged and read "
                                  "back within the SLA", ("broker_id",), namespace=ns, registry=registry)
        self.lag = Gauge("kafka_consumergroup_lag", "Committed offset behind the end offset", LAG, registry=registry)
        self.current_offset = Gauge("kafka_consumergroup_current_offset", "The group's committed offset", LAG,
                                    registry=registry)
        self.lag_sum = Gauge("kafka_consumergroup_lag_sum", "Lag over the topic's partitions", ("consumergroup", "topic"),
                             registry=registry)
        self.members = Gauge("kafka_consumergroup_members", "Members of the group", ("consumergroup",),
                             registry=registry)
        self.topic_offset = Gauge("kafka_topic_partition_current_offset", "End offset of the partition",
                                  ("topic", "partition"), registry=registry)
        self.lag_seconds = Gauge("consumergroup_lag_seconds", "Age of the oldest record the group has not consumed, "
                                 "estimated from end-offset history", LAG, namespace=ns, registry=registry)
        self.status = Gauge("consumergroup_status", "1 for the group's current status (OK, WARNING, REWIND, STALL, "
                            "STOP)", ("consumergroup", "status"), namespace=ns, registry=registry)
        self.broker_up = Gauge("broker_up", "1 while the broker is in the cluster's metadata and answers a request of "
                               "its own, else 0", ("broker_id",), namespace=ns, registry=registry)
        self.since_probe_leader = Gauge("broker_seconds_since_probe_leader", "Seconds since the broker last led its "
                                        "probe partition (0 while it does)", ("broker_id",), namespace=ns,
                                        registry=registry)
        self.part_restarts = Counter("monitor_part_restarts", "Times a part of the monitor (prober, lag, brokers) "
                                     "ended and was started again", ("part",), namespace=ns, registry=registry)

    def know_partition(self, partition: int, replicas: list[int]) -> None:
        """Every probe counter of the partition at 0 for each broker that may lead it."""
        for broker in replicas:
            labels = (str(partition), str(broker))
            for counter in PROBE_COUNTERS:
                getattr(self, counter).labels(*labels)

    def know_part(self, part: str) -> None:
        self.part_restarts.labels(part)

    def apply(self, operations: list[tuple]) -> None:
        """What a part's `Recorder` recorded, done to the metrics here."""
        for name, labels, method, args in operations:
            target = getattr(self, name)
            if method == "call":  # a method of this class: set_status, know_partition
                target(*args)
            elif method == "remove":
                _remove(target, labels)
            else:
                getattr(target.labels(*labels) if labels else target, method)(*args)

    def set_status(self, group: str, status: str) -> None:
        for name in STATUSES:
            self.status.labels(group, name).set(1 if name == status else 0)

    def exposition(self) -> bytes:
        return generate_latest(self.registry)


class Recorder:
    """A part's stand-in for MonitorMetrics: `recorder.lost.labels("0", "2").inc()` records the operation, which
    `take()` hands over for the serving process's MonitorMetrics.apply. Only what the part did crosses; a part that
    dies loses at most what it had not handed over yet."""

    def __init__(self) -> None:
        self._operations: list[tuple] = []

    def __getattr__(self, name: str) -> _RecordedMetric:
        if name.startswith("_"):
            raise AttributeError(name)
        return _RecordedMetric(self._operations, name, ())

    def set_status(self, group: str, status: str) -> None:
        self._operations.append(("set_status", (), "call", (group, status)))

    def know_partition(self, partition: int, replicas: list[int]) -> None:
        self._operations.append(("know_partition", (), "call", (partition, list(replicas))))

    def take(self) -> list[tuple]:
        taken, self._operations = self._operations, []
        return taken


class _RecordedMetric:
    def __init__(self, operations: list, name: str, labels: tuple) -> None:
        self._operations, self._name, self._labels = operations, name, labels

    def labels(self, *labels: str) -> _RecordedMetric:
        return _RecordedMetric(self._operations, self._name, tuple(labels))

    def remove(self, *labels: str) -> None:
        self._operations.append((self._name, tuple(labels), "remove", ()))

    def inc(self, amount: float = 1) -> None:
        self._operations.append((self._name, self._labels, "inc", (amount,)))

    def set(self, value: float) -> None:
        self._operations.append((self._name, self._labels, "set", (value,)))

    def observe(self, value: float) -> None:
        self._operations.append((self._name, self._labels, "observe", (value,)))


PROBE_COUNTERS = ("produced", "acked", "produce_failed", "received", "lost", "late", "duplicated", "out_of_order")


def _remove(metric, labels: tuple) -> None:
    try:
        metric.remove(*labels)
    except KeyError:
        pass

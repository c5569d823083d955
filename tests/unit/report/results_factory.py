"""Result directories for report tests, written with the real result writer and real encoded
HdrHistograms: what a lab would leave behind, without running one."""

import functools
import random
from pathlib import Path

from kafkabench.core.histogram import LatencyHistogram, Stat
from kafkabench.core.results import ResultDocument, Run, stats_from, write_result

MACHINE = {"cores": 8, "memory_gb": 31.3, "os": "Linux 6.1", "python": "3.11.7", "hostname": "lab"}
CLUSTER = {"kind": "embedded", "bootstrap_servers": "127.0.0.1:9092", "kafka_version": "4.1.2", "brokers": 1}
TOOL = {"name": "kafkabench", "version": "0.1.0"}


def histogram(values_ms: list[float]) -> LatencyHistogram:
    recorded = LatencyHistogram()
    for value in values_ms:
        assert recorded.record_ns(int(value * 1_000_000))
    return recorded


def spread(median_ms: float, count: int, seed: int) -> list[float]:
    """A long-tailed latency sample around a median, reproducible."""
    rng = random.Random(seed)
    return [median_ms * rng.lognormvariate(0, 0.4) for _ in range(count)]


def _document(lab: str, created_at: str, runs: list[Run], **fields) -> ResultDocument:
    return ResultDocument(lab=lab, created_at=created_at, command=["kafkabench", lab], tool=TOOL, machine=MACHINE,
                          cluster=fields.pop("cluster", CLUSTER), runs=runs, **fields)


@functools.cache
def _recorded(samples: tuple[tuple[str, float, int, int, float], ...]) -> tuple[dict[str, Stat], dict[str, str]]:
    """Stats and encoded histograms of (metric, median ms, count, seed, factor) samples. Cached: pure-Python
    HdrHistogram is slow enough that recording the same samples in every test would double the test time."""
    histograms = {metric: histogram([v * factor for v in spread(median, count, seed)])
                  for metric, median, count, seed, factor in samples}
    return stats_from(histograms), {metric: h.encode() for metric, h in histograms.items()}


def _measured(client: str, scenario: str, samples: tuple, **fields) -> tuple[Run, dict[str, str]]:
    stats, encoded = _recorded(samples)
    run = Run(client=client, scenario=scenario, stats={m: s.model_copy() for m, s in stats.items()}, **fields)
    return run, dict(encoded)


def latency_result(directory: Path, medians: dict[str, float], created_at: str = "2026-01-01T10:00:00+00:00",
                   plan: dict | None = None, count: int = 200) -> ResultDocument:
    runs, encoded = [], []
    for seed, (client, median) in enumerate(medians.items()):
        # produce is 70 % and consume 30 % of the same e2e sample: each message's parts add up, as measured
        metrics = (("e2e", median, count, seed, 1.0), ("produce", median, count, seed, 0.7),
                   ("consume", median, count, seed, 0.3), ("cold", median * 9, 1, seed, 1.0))
        run, blobs = _measured(client, "ping_pong", metrics, client_version=f"{client} 1.0",
                               params={"size_bytes": 1000, "acks": "1"}, resources={"cpu_s": 0.5, "max_rss_mb": 60.0},
                               counters={"sent": count + 1, "acked": count + 1, "received": count + 1, "errors": 0,
                                         "out_of_range": 0}, throughput={"records_per_s": 123.4}, duration_s=1.5,
                               config={"producer": {"acks": "1", "linger.ms": "0"}})
        runs.append(run)
        encoded.append(blobs)
    document = _document("latency", created_at, runs, plan=plan or {},
                         params={"size_bytes": 1000, "count": count, "warmup": 2, "rounds": 4, "acks": "1"})
    write_result(document, directory, encoded)
    return document


def produce_result(directory: Path, created_at: str = "2026-01-01T11:00:00+00:00") -> ResultDocument:
    timeline = [{"t_s": 0.5 * (i + 1), "records": 5000, "records_per_s": 10_000.0 + 137.25 * i, "mb_per_s": 0.95 + i / 100,
                 "errors": 0, "metric": "publish_latency", "p50_ms": 2.0 + i / 10, "p99_ms": 9.5 + i}
                for i in range(6)]
    producer, producer_blobs = _measured(
        "confluent", "produce", (("publish_latency", 2.5, 5000, 11, 1.0), ("publish_delay", 0.2, 5000, 12, 1.0)),
        client_version="2.16.1", params={"size_bytes": 100, "rate": 10_000.0},
        throughput={"records_per_s": 10_342.123456, "payload_mb_per_s": 0.986},
        counters={"sent": 30_000, "acked": 30_000, "errors": 2, "errors.KafkaTimeoutError": 2, "payload_bytes": 3_000_000,
                  "wire_bytes": 3_900_000, "out_of_range": 0},
        resources={"cpu_s": 1.25, "max_rss_mb": 70.5}, duration_s=3.0, timeline=timeline)
    consumer, consumer_blobs = _measured(
        "confluent", "consume", (("e2e", 4.0, 5000, 13, 1.0),), client_version="2.16.1", params={"size_bytes": 100},
        throughput={"records_per_s": 10_001.5, "payload_mb_per_s": 0.95},
        counters={"received": 30_000, "errors": 0, "payload_bytes": 3_000_000, "out_of_range": 0},
        resources={"cpu_s": 0.75}, duration_s=3.1, timings={"rebalance_s": 0.2, "first_record_s": 0.01},
        timeline=[{**entry, "metric": "e2e", "p99_ms": None} for entry in timeline])
    document = _document("produce", created_at, [producer, consumer],
                         params={"topic": "orders", "size_bytes": 100, "client": "confluent", "rate": 10_000.0})
    write_result(document, directory, [producer_blobs, consumer_blobs])
    return document


COMPRESSION_CELLS = [  # format, codec, level, stored bytes, duration s, producer CPU s, broker CPU s
    ("json", "none", None, 1_567_428, 0.082, 0.045, 0.040),
    ("json", "zstd", 3, 160_021, 0.085, 0.050, 0.030),
    ("json", "gzip", None, 161_500, 0.160, 0.080, 0.100),
    ("avro", "none", None, 440_000, 0.130, 0.040, 0.130),
    ("avro", "lz4", None, 170_000, 0.050, 0.040, 0.060),
]


def compression_result(directory: Path, created_at: str = "2026-01-01T12:00:00+00:00",
                       cells: list[tuple] = COMPRESSION_CELLS) -> ResultDocument:
    runs = [Run(client="confluent", scenario="compression",
                params={"format": fmt, "codec": codec, "level": level, "rows": 5000},
                counters={"stored_bytes": stored, "wire_bytes": stored + 289, "payload_bytes": 1_517_434, "rows": 5000},
                resources={"cpu_s": cpu, "broker_cpu_s": broker}, duration_s=duration,
                throughput={"records_per_s": 5000 / duration, "payload_mb_per_s": 1.5 / duration, "read_rows_per_s": 44_000.5})
            for fmt, codec, level, stored, duration, cpu, broker in cells]
    document = _document("compression", created_at, runs,
                         params={"rows": 5000, "dataset": "purchases", "repeats": 1, "levels": {"zstd": [3]}})
    write_result(document, directory, [])
    return document


# the durability lab: label -> (name, partitions, RF, min.insync, acks, records/s and publish p99 ms per repeat)
DURABILITY_CELLS = {
    "yolo confluent": ("yolo", 2, 2, 1, "1", (50_000.0, 52_000.0, 51_000.0), (2.0, 2.4, 2.2)),
    "throughput-rf3 confluent": ("throughput-rf3", 2, 3, 1, "1", (45_000.0, 47_000.0, 44_000.0), (3.0, 3.5, 3.1)),
    "durable confluent": ("durable", 2, 3, 2, "all", (30_000.0, 1_000.0, 29_500.0), (9.0, 80.0, 12.0)),
    "p1 rf1 isr2 acks=all idem=off confluent": ("", 1, 1, 2, "all", (40_000.0, 41_000.0, 39_000.0), (4.0, 4.4, 4.1)),
}
DURABILITY_FAILED = ("durable confluent", 2)  # this repeat timed out: its partial figures must not count
DURABILITY_REFUSED = {"p2 rf3 isr2 acks=1 idem=on java": "Must set acks to all in order to use the idempotent producer."}


def availability_step(mode: str, down: str, brokers: list[int], roles: str, writes: str, **fields) -> dict:
    step = {"mode": mode, "down": down, "brokers": brokers, "roles": roles, "observed_s": 10.0, "sent": 500,
            "acked": 500, "errors": {}, "writes": writes, "refusal": None, "refused_in_ms": None, "stall_s": 0.05,
            "isr_shrunk_s": 9.1, "leader": 1, "isr": [1], "reads": {"ok": True, "records": 500, "of": 500, "seconds": 0.4}}
    return {**step, **fields}


def availability_group(rf: int, min_isr: int, acks: str, cells: list[str], steps: list[dict], error: str | None = None) -> dict:
    return {"replication_factor": rf, "min_isr": min_isr, "effective_min_isr": min(rf, min_isr), "acks": acks,
            "topic": f"kafkabench-availability-rf{rf}-isr{min_isr}-acks{acks}", "cells": cells, "probed_with": "confluent",
            "error": error, "steps": steps}


def durability_availability() -> list[dict]:
    """The throughput topic accepts writes whatever goes down; the durable one refuses them with two brokers
    down; the yolo topic's probe failed."""
    refused = {"writes": "refused", "acked": 0, "errors": {"NOT_ENOUGH_REPLICAS": 500}, "refusal": "NOT_ENOUGH_REPLICAS"}
    return [
        availability_group(2, 1, "1", ["yolo confluent"], [], error="broker 2 did not stop within 30 s"),
        availability_group(3, 1, "1", ["throughput-rf3 confluent"], [
            availability_step("pause", "one follower", [3], "follower 3", "accepted", isr=[1, 2]),
            availability_step("pause", "two brokers", [3, 2], "followers 3, 2", "accepted", stall_s=0.2),
            availability_step("kill", "one follower", [3], "follower 3", "accepted", isr=[1, 2]),
            availability_step("kill", "two brokers", [3, 2], "followers 3, 2", "accepted")]),
        availability_group(3, 2, "all", ["durable confluent"], [
            availability_step("pause", "one follower", [3], "follower 3", "accepted", stall_s=30.4, isr=[1, 2]),
            availability_step("pause", "two brokers", [3, 2], "followers 3, 2", **refused, refused_in_ms=3.2, stall_s=30.1,
                              reads={"ok": True, "records": 480, "of": 480, "seconds": 0.4}),
            availability_step("kill", "one follower", [3], "follower 3", "accepted", isr=[1, 2]),
            availability_step("kill", "two brokers", [2, 1], "follower 2 and leader 1", **refused, refused_in_ms=2.5,
                              stall_s=8.8, leader=3, isr=[3], reads={"ok": True, "records": 480, "of": 480, "seconds": 6.1})]),
    ]


def publish_stat(p99_ms: float, count: int) -> Stat:
    return Stat(count=count, mean_ms=p99_ms / 3, p50_ms=p99_ms / 4, p90_ms=p99_ms / 2, p99_ms=p99_ms,
                p999_ms=p99_ms * 2, max_ms=p99_ms * 3, min_ms=p99_ms / 10)


def _durability_runs(label: str, cell: tuple, repeat: int, position: int, failed: bool) -> list[Run]:
    name, partitions, rf, min_isr, acks, rates, p99s = cell
    params = {"cell": label, "name": name, "partitions": partitions, "replication_factor": rf,
              "min_insync_replicas": min_isr, "effective_min_isr": min(rf, min_isr), "acks": acks, "idempotence": "off",
              "repeat": repeat, "position": position, "topic_description": [{"partition": 0, "leader": 1, "replicas": [1, 2],
                                                                            "isr": [1, 2]}]}
    if min_isr > rf:
        params["min_isr_note"] = f"min.insync.replicas {min_isr} capped to {rf} by {rf} replica(s)"
    rate, p99, count = rates[repeat - 1], p99s[repeat - 1], 20_000
    error = "no progress for 60 s" if failed else None
    produce = Run(client="confluent", scenario="produce", params=dict(params), error=error, duration_s=count / rate,
                  stats={"publish_latency": publish_stat(p99, count)},
                  throughput={"records_per_s": rate, "payload_mb_per_s": rate * 100 / 2**20},
                  counters={"sent": count, "acked": count, "errors": 0}, resources={"cpu_s": 2.0 + repeat / 10})
    consume = Run(client="confluent", scenario="consume", params=dict(params), error=error, duration_s=count / rate,
                  stats={"e2e": publish_stat(p99 * 1.5, count)}, throughput={"records_per_s": rate},
                  counters={"received": count, "errors": 0})
    return [produce, consume]


def durability_result(directory: Path, cells: dict[str, tuple] = DURABILITY_CELLS, repeats: int = 3,
                      availability: list[dict] | None = None, failed: tuple[str, int] | None = DURABILITY_FAILED,
                      created_at: str = "2026-01-01T13:00:00+00:00") -> ResultDocument:
    """Every cell repeated in a rotated order, produce then consume run per cell and repeat, as the lab writes them."""
    labels = list(cells)
    runs = []
    for repeat in range(1, repeats + 1):
        order = labels[repeat - 1:] + labels[:repeat - 1]
        for position, label in enumerate(order, 1):
            runs += _durability_runs(label, cells[label], repeat, position, (label, repeat) == failed)
    params = {"preset": "seed", "size": 100, "repeats": repeats, "order": "shuffled", "seed": 7,
              "cells": [*labels, *DURABILITY_REFUSED], "refused": dict(DURABILITY_REFUSED)}
    if availability is not None:
        params["availability"] = availability
    document = _document("durability", created_at, runs, params=params,
                         cluster={**CLUSTER, "brokers": 3, "layout": "3 brokers + 1 controller"})
    write_result(document, directory, [])
    return document

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

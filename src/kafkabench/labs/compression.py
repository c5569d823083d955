"""The compression lab (seed 002): format x codec (x level), what each costs and saves.

Rows are generated (or read) and encoded once per format into a records file before any cell runs, so
the generator and the encoder are never inside a measured loop; the generated purchases are encoded a
block at a time from pre-encoded fragments (formats/codecs.py), and the first rows are decoded back and
compared. Each cell then produces the same rows to a fresh single-partition topic with the codec set on the producer and on the topic, as the seed did, and a
consumer reads and decodes them all. Cells run in a different order in every repeat.
"""

from __future__ import annotations

import itertools
import random
import statistics
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

import psutil

from kafkabench import clients as client_registry
from kafkabench.admin import KafkaAdmin
from kafkabench.cluster.target import Target
from kafkabench.config.client_settings import build_settings, fit_payload
from kafkabench.config.properties import Setting
from kafkabench.config.translate import translate
from kafkabench.core.protocol import Ready, Start, Task
from kafkabench.core.records_file import frames, read_records, write_blocks
from kafkabench.core.results import ResultDocument, Run, write_result
from kafkabench.core.worker_process import WorkerFailed
from kafkabench.datasets.purchases import PurchasePools, blocks
from kafkabench.datasets.sources import Dataset, open_dataset
from kafkabench.errors import ConfigError, KafkabenchError
from kafkabench.formats.codecs import FORMATS, PurchaseEncoder, make_format
from kafkabench.labs import throughput_fleet as fleet
from kafkabench.labs import throughput_merge as merge
from kafkabench.labs.document import new_document

CODECS = ("none", "gzip", "snappy", "lz4", "zstd")
LEVELED = ("gzip", "lz4", "zstd")  # KIP-390
# batches are what a codec compresses: let them fill (the seed's producer waited 3 s)
LAB_PRODUCER = {"linger.ms": "50", "batch.size": "1048576"}


@dataclass
class CompressionRequest:
    rows: int = 100_000
    formats: list[str] = field(default_factory=lambda: list(FORMATS))
    codecs: list[str] = field(default_factory=lambda: list(CODECS))
    levels: dict[str, list[int]] = field(default_factory=dict)
    dataset: str = "purchases"
    client: str = "confluent"
    repeats: int = 1
    producer_file: dict[str, Setting] = field(default_factory=dict)
    overrides: dict[str, Setting] = field(default_factory=dict)
    timeout_s: float = 60


@dataclass(frozen=True)
class Cell:
    format: str
    codec: str
    level: int | None = None

    @property
    def label(self) -> str:
        return f"{self.format} {self.codec}" + (f" {self.level}" if self.level is not None else "")


class CompressionListener(Protocol):
    def note(self, message: str) -> None: ...
    def cell_done(self, cell: Cell, repeat: int, summary: dict) -> None: ...


class CompressionRunFailed(KafkabenchError):
    def __init__(self, message: str, document: ResultDocument) -> None:
        super().__init__(message)
        self.document = document


def parse_levels(items: list[str]) -> dict[str, list[int]]:
    """`zstd=1,3,19` -> {"zstd": [1, 3, 19]}."""
    levels: dict[str, list[int]] = {}
    for item in items:
        codec, sep, values = item.partition("=")
        if not sep or codec not in LEVELED:
            raise ConfigError(f"--levels {item!r}: expected CODEC=L1,L2 with CODEC one of {', '.join(LEVELED)}")
        try:
            levels[codec] = [int(v) for v in values.split(",") if v.strip()]
        except ValueError:
            raise ConfigError(f"--levels {item!r}: levels are whole numbers") from None
    return levels


def plan_cells(request: CompressionRequest, dataset: Dataset) -> list[Cell]:
    for name in request.codecs:
        if name not in CODECS:
            raise ConfigError(f"unknown codec {name!r}; known: {', '.join(CODECS)}")
    formats = ["raw"] if dataset.kind == "files" else request.formats
    for name in formats:
        if name not in (*FORMATS, "raw"):
            raise ConfigError(f"unknown format {name!r}; known: {', '.join(FORMATS)}")
    cells = []
    for fmt in formats:
        for codec in request.codecs:
            for level in request.levels.get(codec, [None]):
                cells.append(Cell(fmt, codec, level))
    return cells


def cell_settings(cell: Cell, request: CompressionRequest, largest: int):
    producer = {**LAB_PRODUCER, "compression.type": cell.codec}
    topic = {"compression.type": "uncompressed" if cell.codec == "none" else cell.codec}
    if cell.level is not None:
        producer[f"compression.{cell.codec}.level"] = str(cell.level)
        topic[f"compression.{cell.codec}.level"] = str(cell.level)
    settings = build_settings(defaults={"producer": producer, "topic": topic}, producer_file=request.producer_file,
                              overrides=request.overrides)
    fit_payload(settings, largest)
    return settings


@dataclass
class _Prepared:
    path: Path
    records: int
    payload_bytes: int
    largest: int
    encode_s: float  # generating and encoding, the pools included
    write_s: float  # writing the records file

    @property
    def rows_per_s(self) -> float:
        return self.records / max(self.encode_s, 1e-9)


def prepare_records(request: CompressionRequest, dataset: Dataset, cells: list[Cell], directory: Path) -> dict[str, _Prepared]:
    """Generate and encode the rows once per format into a records file, round-trip checked, timed."""
    prepared = {}
    for fmt in dict.fromkeys(cell.format for cell in cells):
        started = time.perf_counter()
        encoded, check = _encoded_blocks(fmt, dataset, request.rows)
        path = directory / f".records-{fmt}.bin"
        written = write_blocks(path, encoded)
        elapsed = time.perf_counter() - started
        prepared[fmt] = _Prepared(path, written.records, written.payload_bytes, written.largest,
                                  elapsed - written.write_s, written.write_s)
        check(path)
    return prepared


def _encoded_blocks(fmt: str, dataset: Dataset, rows: int):
    """The encoded rows in framed blocks, and a check that the first ones decode back to the rows they came from."""
    codec = make_format(fmt, dataset)
    if dataset.kind == "purchases":  # fragments concatenated a block at a time: no row ever becomes a dict
        pools = PurchasePools(rows)
        encoder = PurchaseEncoder(fmt, pools)
        encoded = itertools.starmap(encoder.encode_block, blocks(0, rows))
        expected = lambda count: pools.rows(0, count)  # noqa: E731
    else:
        encoded = frames(codec.encode(row) for row in dataset.rows(rows))
        expected = lambda count: list(dataset.rows(count))  # noqa: E731

    def check(path: Path) -> None:
        count = min(rows, 1000)
        decoded = [codec.decode(value) for value in itertools.islice(read_records(path), count)]
        if decoded != expected(count):
            raise ConfigError(f"the {fmt} encoding of {dataset.name} does not decode back to the rows it came from")

    return encoded, check


def check_request(request: CompressionRequest) -> tuple[Dataset, list[Cell]]:
    """Everything that can be wrong with the request, found before a cluster is touched."""
    dataset = open_dataset(request.dataset)
    cells = plan_cells(request, dataset)
    if request.client not in client_registry.PYTHON_KAFKA_CLIENTS:
        raise ConfigError(f"--client {request.client}: the compression lab replays records files with a Python client "
                          f"({', '.join(client_registry.PYTHON_KAFKA_CLIENTS)})")
    for fmt in dict.fromkeys(cell.format for cell in cells):
        make_format(fmt, dataset)  # e.g. protobuf for a CSV: no schema
    for cell in cells:
        translate(request.client, "producer", cell_settings(cell, request, 1).values("producer"))
    return dataset, cells


def run_compression(request: CompressionRequest, target: Target, out_dir: Path, listener: CompressionListener) -> ResultDocument:
    dataset, cells = check_request(request)
    out_dir.mkdir(parents=True, exist_ok=True)
    prepared = prepare_records(request, dataset, cells, out_dir)
    for fmt, p in prepared.items():
        listener.note(f"{fmt}: {p.records} rows, {p.payload_bytes / 1e6:.1f} MB generated and encoded at {p.rows_per_s:,.0f} rows/s, "
                      f"written in {p.write_s:.2f} s")
    document = _new_document(request, dataset, target, prepared)
    measured: dict[Cell, list[dict]] = {cell: [] for cell in cells}
    try:
        with KafkaAdmin(target.bootstrap_servers, timeout_s=request.timeout_s) as admin:
            for repeat in range(request.repeats):
                order = list(cells)
                random.Random(repeat).shuffle(order)  # interleaved: no cell always runs first or last
                for cell in order:
                    summary = _run_cell(cell, request, dataset, prepared[cell.format], target, admin)
                    measured[cell].append(summary)
                    listener.cell_done(cell, repeat, summary)
    except (KafkabenchError, KeyboardInterrupt) as exc:
        document.error = "interrupted" if isinstance(exc, KeyboardInterrupt) else str(exc)
    finally:
        for p in prepared.values():
            p.path.unlink(missing_ok=True)
    document.runs = [_to_run(cell, repeats, request) for cell, repeats in measured.items() if repeats]
    write_result(document, out_dir)
    if document.error:
        raise CompressionRunFailed(f"{document.error}; results of the finished cells kept in {out_dir}", document)
    return document


def _run_cell(cell: Cell, request: CompressionRequest, dataset: Dataset, prepared: _Prepared, target: Target,
              admin: KafkaAdmin) -> dict:
    settings = cell_settings(cell, request, prepared.largest)
    topic = f"kafkabench-compression-{uuid.uuid4().hex[:8]}"
    admin.create_topic(topic, 1, 1, settings.values("topic"))
    try:
        broker_before = _broker_cpu(target)
        producer = _produce(cell, request, settings, topic, prepared, target)
        # the brokers' CPU for the produce phase alone: the log-dir polling below is not the codec's cost
        broker_cpu = _broker_cpu(target) - broker_before if broker_before is not None else None
        stored = _stored_bytes(admin, topic)
        consumer = _consume(request, dataset, cell, topic, prepared, target, settings)
    finally:
        try:
            admin.delete_topic(topic)
        except KafkabenchError:
            pass
    return {"stored_bytes": stored, "wire_bytes": producer.counters.get("wire_bytes"),
            "payload_bytes": producer.counters.get("payload_bytes", 0), "acked": producer.counters.get("acked", 0),
            "duration_s": producer.duration_s, "cpu_s": producer.resources.get("cpu_s"), "broker_cpu_s": broker_cpu,
            "read_rows_per_s": consumer.counters.get("received", 0) / consumer.duration_s if consumer.duration_s else None,
            "read_rows": consumer.counters.get("received", 0),
            "producer_config": producer.effective_config.get("producer", {}), "topic_config": settings.values("topic")}


def _one_worker(role: str, task: Task, timeout_s: float):
    worker = fleet.launch(role, 0, _command(task.client), task)
    try:
        worker.process.receive(Ready, timeout_s=120 + timeout_s)
        worker.process.send(Start())
        fleet.follow([worker], {role: merge.Timeline([worker.name], "e2e")}, _Silent(), 0, timeout_s)
        if worker.error or worker.outcome is None:
            raise WorkerFailed(worker.name, worker.error or "no result")
        return worker.outcome
    finally:
        worker.process.stop()


def _command(client: str) -> list[str]:
    return client_registry.worker_command(client)


def _produce(cell, request, settings, topic, prepared, target):
    config = translate(request.client, "producer", settings.values("producer")).config
    task = Task(scenario="produce", client=request.client, bootstrap_servers=target.bootstrap_servers, topic=topic,
                producer_config=config, timeout_s=request.timeout_s,
                params={"records_file": str(prepared.path), "count": prepared.records, "rate_per_s": -1, "interval_s": 5})
    outcome = _one_worker("produce", task, request.timeout_s)
    if outcome.counters.get("acked") != prepared.records:
        raise KafkabenchError(f"{cell.label}: {outcome.counters.get('acked')} of {prepared.records} rows acknowledged")
    return outcome


def _consume(request, dataset, cell, topic, prepared, target, settings):
    values = {**settings.values("consumer"), "group.id": f"kafkabench-{topic}", "auto.offset.reset": "earliest"}
    config = translate(request.client, "consumer", values).config
    task = Task(scenario="consume", client=request.client, bootstrap_servers=target.bootstrap_servers, topic=topic,
                consumer_config=config, timeout_s=request.timeout_s,
                params={"count": prepared.records, "interval_s": 5, "idle_timeout_s": request.timeout_s,
                        "decode": {"format": cell.format, "dataset": request.dataset}})
    return _one_worker("consume", task, request.timeout_s)


class _Silent:
    def window(self, role, entry) -> None:
        pass

    def done(self, role, records) -> None:
        pass


def _stored_bytes(admin: KafkaAdmin, topic: str) -> int:
    """Log-dir size once it stops changing (the broker appends what it acknowledged; give it a moment)."""
    previous, deadline = -1, time.monotonic() + 10
    while time.monotonic() < deadline:
        size = sum(r.size_bytes for r in admin.stored_bytes(topic))
        if size == previous:
            return size
        previous = size
        time.sleep(0.2)
    return previous


def _broker_cpu(target: Target) -> float | None:
    """CPU seconds of the embedded cluster's broker processes; None for a cluster kafkabench did not start."""
    if target.cluster is None:
        return None
    total = 0.0
    for broker in target.cluster.status().brokers:
        if broker.pid:
            times = psutil.Process(broker.pid).cpu_times()
            total += times.user + times.system
    return total


def _median(values):
    present = [v for v in values if v is not None]
    return statistics.median(present) if present else None


def _to_run(cell: Cell, repeats: list[dict], request: CompressionRequest) -> Run:
    first = repeats[0]
    broker_cpu = _median(r["broker_cpu_s"] for r in repeats)
    return Run(
        client=request.client, scenario="compression",
        params={"format": cell.format, "codec": cell.codec, "level": cell.level, "rows": first["acked"],
                "repeats": len(repeats), "dataset": request.dataset},
        counters={"stored_bytes": first["stored_bytes"], "payload_bytes": first["payload_bytes"], "rows": first["acked"],
                  **({"wire_bytes": int(_median(r["wire_bytes"] for r in repeats))} if first["wire_bytes"] is not None else {})},
        resources={"cpu_s": _median(r["cpu_s"] for r in repeats), "broker_cpu_s": broker_cpu},
        duration_s=_median(r["duration_s"] for r in repeats),
        throughput={**merge.throughput(first["acked"], first["payload_bytes"], 0, int(_median(r["duration_s"] for r in repeats) * 1e9)),
                    "read_rows_per_s": _median(r["read_rows_per_s"] for r in repeats) or 0.0},
        config={"producer": first["producer_config"], "topic": first["topic_config"]},
        reported={"repeats": [{k: v for k, v in r.items() if not k.endswith("_config")} for r in repeats]},
    )


def _new_document(request: CompressionRequest, dataset: Dataset, target: Target, prepared: dict) -> ResultDocument:
    notes = [] if target.cluster is not None else ["broker CPU is unavailable on a cluster kafkabench did not start (shown as -, not 0)"]
    params = {"rows": request.rows, "dataset": dataset.name, "formats": sorted(prepared), "codecs": request.codecs,
              "levels": request.levels, "repeats": request.repeats, "client": request.client,
              "encode_rows_per_s": {fmt: round(p.rows_per_s) for fmt, p in prepared.items()},
              "records_file_write_s": {fmt: round(p.write_s, 3) for fmt, p in prepared.items()}}
    return new_document("compression", target, params, notes)

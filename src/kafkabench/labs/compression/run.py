"""The compression lab's run (seed 002): format x codec (x level), what each costs and saves.

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
from dataclasses import dataclass
from pathlib import Path

import psutil

from kafkabench import clients as client_registry
from kafkabench.admin import KafkaAdmin
from kafkabench.cluster.target import Target
from kafkabench.config.client_settings import fit_payload
from kafkabench.config.translate import translate
from kafkabench.core import fleet, merge
from kafkabench.core.events import SILENT, Listener
from kafkabench.core.protocol import ConsumeParams, DecodeSpec, ProduceParams, Ready, Start, Task, task_params
from kafkabench.core.records_file import frames, read_records, write_blocks
from kafkabench.core.results import ResultDocument, Run, write_result
from kafkabench.core.worker_process import WorkerFailed
from kafkabench.datasets.purchases import PurchasePools, blocks
from kafkabench.datasets.sources import Dataset, open_dataset
from kafkabench.errors import ConfigError, KafkabenchError
from kafkabench.core.timeline import Timeline
from kafkabench.formats.codecs import FORMATS, PurchaseEncoder, make_format
from kafkabench.labs.base import LabFailed
from kafkabench.labs.compression.scenario import CODECS, CompressionScenario
from kafkabench.labs.document import new_document

# batches are what a codec compresses: let them fill (the seed's producer waited 3 s)
LAB_PRODUCER = {"linger.ms": "50", "batch.size": "1048576"}


@dataclass(frozen=True)
class Cell:
    format: str
    codec: str
    level: int | None = None

    @property
    def label(self) -> str:
        return f"{self.format} {self.codec}" + (f" {self.level}" if self.level is not None else "")


def plan_cells(scenario: CompressionScenario, dataset: Dataset) -> list[Cell]:
    for name in scenario.codecs:
        if name not in CODECS:
            raise ConfigError(f"unknown codec {name!r}; known: {', '.join(CODECS)}")
    formats = ["raw"] if dataset.kind == "files" else scenario.formats
    for name in formats:
        if name not in (*FORMATS, "raw"):
            raise ConfigError(f"unknown format {name!r}; known: {', '.join(FORMATS)}")
    cells = []
    for fmt in formats:
        for codec in scenario.codecs:
            for level in scenario.levels.get(codec, [None]):
                cells.append(Cell(fmt, codec, level))
    return cells


def cell_settings(cell: Cell, scenario: CompressionScenario, largest: int):
    producer = {**LAB_PRODUCER, "compression.type": cell.codec}
    topic = {"compression.type": "uncompressed" if cell.codec == "none" else cell.codec}
    if cell.level is not None:
        producer[f"compression.{cell.codec}.level"] = str(cell.level)
        topic[f"compression.{cell.codec}.level"] = str(cell.level)
    settings = scenario.settings({"producer": producer, "topic": topic})
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


def prepare_records(scenario: CompressionScenario, dataset: Dataset, cells: list[Cell], directory: Path) -> dict[str, _Prepared]:
    """Generate and encode the rows once per format into a records file, round-trip checked, timed."""
    prepared = {}
    for fmt in dict.fromkeys(cell.format for cell in cells):
        started = time.perf_counter()
        encoded, check = _encoded_blocks(fmt, dataset, scenario.rows)
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


def check_request(scenario: CompressionScenario) -> tuple[Dataset, list[Cell]]:
    """Everything that can be wrong with the scenario, found before a cluster is touched."""
    varied = sorted(k for k in {**scenario.producer, **scenario.overrides} if k.startswith("compression."))
    if varied:
        raise ConfigError(f"the compression lab varies {varied[0]} itself; drop it from -X, --producer-config, the profile or the scenario")
    dataset = open_dataset(scenario.dataset)
    cells = plan_cells(scenario, dataset)
    if scenario.client not in client_registry.PYTHON_KAFKA_CLIENTS:
        raise ConfigError(f"--client {scenario.client}: the compression lab replays records files with a Python client "
                          f"({', '.join(client_registry.PYTHON_KAFKA_CLIENTS)})")
    for fmt in dict.fromkeys(cell.format for cell in cells):
        make_format(fmt, dataset)  # e.g. protobuf for a CSV: no schema
    for cell in cells:
        translate(scenario.client, "producer", cell_settings(cell, scenario, 1).values("producer"))
    return dataset, cells


def run_compression(scenario: CompressionScenario, target: Target, out_dir: Path, listener: Listener) -> ResultDocument:
    dataset, cells = check_request(scenario)
    out_dir.mkdir(parents=True, exist_ok=True)
    prepared = prepare_records(scenario, dataset, cells, out_dir)
    for fmt, p in prepared.items():
        listener.note(f"{fmt}: {p.records} rows, {p.payload_bytes / 1e6:.1f} MB generated and encoded at {p.rows_per_s:,.0f} rows/s, "
                      f"written in {p.write_s:.2f} s")
    document = _new_document(scenario, dataset, target, prepared)
    measured: dict[Cell, list[dict]] = {cell: [] for cell in cells}
    done = 0
    try:
        with KafkaAdmin(target.connection, timeout_s=scenario.timeout) as admin:
            for repeat in range(scenario.repeats):
                order = list(cells)
                random.Random(repeat).shuffle(order)  # interleaved: no cell always runs first or last
                for cell in order:
                    summary = _run_cell(cell, scenario, dataset, prepared[cell.format], target, admin)
                    measured[cell].append(summary)
                    done += 1
                    listener.note(_cell_line(cell, repeat, summary))
                    listener.progress(done, len(cells) * scenario.repeats, "cells")
    except (KafkabenchError, KeyboardInterrupt) as exc:
        document.error = "interrupted" if isinstance(exc, KeyboardInterrupt) else str(exc)
    finally:
        for p in prepared.values():
            p.path.unlink(missing_ok=True)
    document.runs = [_to_run(cell, repeats, scenario) for cell, repeats in measured.items() if repeats]
    write_result(document, out_dir)
    if document.error:
        raise LabFailed(f"{document.error}; results of the finished cells kept in {out_dir}", document)
    return document


def _run_cell(cell: Cell, scenario: CompressionScenario, dataset: Dataset, prepared: _Prepared, target: Target,
              admin: KafkaAdmin) -> dict:
    settings = cell_settings(cell, scenario, prepared.largest)
    topic = f"kafkabench-compression-{uuid.uuid4().hex[:8]}"
    admin.create_topic(topic, 1, 1, settings.values("topic"))
    try:
        broker_before = _broker_cpu(target)
        producer = _produce(cell, scenario, settings, topic, prepared, target)
        # the brokers' CPU for the produce phase alone: the log-dir polling below is not the codec's cost
        broker_cpu = _broker_cpu(target) - broker_before if broker_before is not None else None
        stored = _stored_bytes(admin, topic)
        consumer = _consume(scenario, dataset, cell, topic, prepared, target, settings)
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


def _cell_line(cell: Cell, repeat: int, summary: dict) -> str:
    return (f"repeat {repeat + 1}  {cell.label:22} stored {summary['stored_bytes'] / 1e6:8.2f} MB  "
            f"{summary['duration_s']:6.2f} s  read {summary['read_rows_per_s'] or 0:>10,.0f} rows/s")


def _one_worker(role: str, task: Task, target: Target, timeout_s: float):
    worker = fleet.launch(role, 0, target.launcher, task.client, task)
    try:
        worker.process.receive(Ready, timeout_s=120 + timeout_s)
        worker.process.send(Start())
        fleet.follow([worker], {role: Timeline([worker.name], "e2e")}, SILENT, 0, timeout_s)
        if worker.error or worker.outcome is None:
            raise WorkerFailed(worker.name, worker.error or "no result")
        return worker.outcome
    finally:
        worker.process.stop()


def _produce(cell, scenario, settings, topic, prepared, target):
    config = translate(scenario.client, "producer", settings.values("producer")).config
    task = Task(scenario="produce", client=scenario.client, bootstrap_servers=target.bootstrap_servers, topic=topic,
                producer_config=config, timeout_s=scenario.timeout,
                params=task_params(ProduceParams(records_file=target.launcher.share(prepared.path), count=prepared.records,
                                                 rate_per_s=-1, interval_s=5)))
    outcome = _one_worker("produce", task, target, scenario.timeout)
    if outcome.counters.get("acked") != prepared.records:
        raise KafkabenchError(f"{cell.label}: {outcome.counters.get('acked')} of {prepared.records} rows acknowledged")
    return outcome


def _consume(scenario, dataset, cell, topic, prepared, target, settings):
    values = {**settings.values("consumer"), "group.id": f"kafkabench-{topic}", "auto.offset.reset": "earliest"}
    config = translate(scenario.client, "consumer", values).config
    task = Task(scenario="consume", client=scenario.client, bootstrap_servers=target.bootstrap_servers, topic=topic,
                consumer_config=config, timeout_s=scenario.timeout,
                params=task_params(ConsumeParams(count=prepared.records, interval_s=5, idle_timeout_s=scenario.timeout,
                                                 decode=DecodeSpec(format=cell.format, dataset=scenario.dataset))))
    return _one_worker("consume", task, target, scenario.timeout)


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
    if not target.started_here:
        return None
    total = 0.0
    for pid in target.faults.broker_pids().values():
        times = psutil.Process(pid).cpu_times()
        total += times.user + times.system
    return total


def _median(values):
    present = [v for v in values if v is not None]
    return statistics.median(present) if present else None


def _to_run(cell: Cell, repeats: list[dict], scenario: CompressionScenario) -> Run:
    first = repeats[0]
    broker_cpu = _median(r["broker_cpu_s"] for r in repeats)
    return Run(
        client=scenario.client, scenario="compression",
        params={"format": cell.format, "codec": cell.codec, "level": cell.level, "rows": first["acked"],
                "repeats": len(repeats), "dataset": scenario.dataset},
        counters={"stored_bytes": first["stored_bytes"], "payload_bytes": first["payload_bytes"], "rows": first["acked"],
                  **({"wire_bytes": int(_median(r["wire_bytes"] for r in repeats))} if first["wire_bytes"] is not None else {})},
        resources={"cpu_s": _median(r["cpu_s"] for r in repeats), "broker_cpu_s": broker_cpu},
        duration_s=_median(r["duration_s"] for r in repeats),
        throughput={**merge.throughput(first["acked"], first["payload_bytes"], 0, int(_median(r["duration_s"] for r in repeats) * 1e9)),
                    "read_rows_per_s": _median(r["read_rows_per_s"] for r in repeats) or 0.0},
        config={"producer": first["producer_config"], "topic": first["topic_config"]},
        reported={"repeats": [{k: v for k, v in r.items() if not k.endswith("_config")} for r in repeats]},
    )


def _new_document(scenario: CompressionScenario, dataset: Dataset, target: Target, prepared: dict) -> ResultDocument:
    notes = [] if target.started_here else ["broker CPU is unavailable on a cluster kafkabench did not start (shown as -, not 0)"]
    params = {"rows": scenario.rows, "dataset": dataset.name, "formats": sorted(prepared), "codecs": scenario.codecs,
              "levels": scenario.levels, "repeats": scenario.repeats, "client": scenario.client,
              "encode_rows_per_s": {fmt: round(p.rows_per_s) for fmt, p in prepared.items()},
              "records_file_write_s": {fmt: round(p.write_s, 3) for fmt, p in prepared.items()}}
    return new_document("compression", target, params, notes)

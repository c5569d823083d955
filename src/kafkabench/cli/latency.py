"""`kafkabench latency`: end-to-end latency of a large payload, every client side by side (seed 000)."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from kafkabench.cli import common
from kafkabench.cli.output import abort, err, note, out
from kafkabench.cluster.target import open_target
from kafkabench.config.client_settings import bootstrap_from
from kafkabench.labs.latency import SEED_IMAGE_BYTES, LatencyRequest, LatencyRunFailed, plan_latency, run_latency
from kafkabench.report.latency_table import latency_table, run_errors


class _NoteListener:
    def note(self, message: str) -> None:
        note(message)


class _ProgressListener:
    def __init__(self, bar: Progress) -> None:
        self._bar = bar
        self._tasks: dict[str, int] = {}

    def note(self, message: str) -> None:
        self._bar.console.print(f"[dim]{escape(message)}[/]", highlight=False)

    def client_ready(self, client: str, version: str) -> None:
        self._tasks[client] = self._bar.add_task(f"{client} {version}", total=None)

    def progress(self, client: str, done: int, total: int) -> None:
        self._bar.update(self._tasks[client], completed=done, total=total)


def latency(
    payload: Optional[Path] = typer.Option(None, "--payload", help="Send this file's bytes (e.g. a JPEG)."),
    size: int = typer.Option(SEED_IMAGE_BYTES, "--size", min=1, help="Without --payload: this many incompressible bytes (default: the seed's 1.3 MB image)."),
    count: int = typer.Option(200, "--count", "-n", min=1, help="Measured messages per client."),
    warmup: int = typer.Option(10, "--warmup", min=0, help="Messages after the cold one that are not measured."),
    rounds: int = typer.Option(10, "--rounds", min=1, help="Interleaved rounds the count is split into."),
    clients: Optional[str] = typer.Option(None, "--clients", help="Comma-separated: confluent,kafka-python,aiokafka,java,http,tcp; default: all available."),
    acks: str = typer.Option("1", "--acks", help="Producer acks: 0, 1 or all."),
    replication_factor: int = typer.Option(1, "--replication-factor", min=1, help="Replicas of each client's topic."),
    topic_config: list[str] = common.TopicConfigOption,
    producer_config: Optional[Path] = common.ProducerConfigOption,
    consumer_config: Optional[Path] = common.ConsumerConfigOption,
    x: list[str] = common.OverrideOption,
    bootstrap_servers: Optional[str] = common.BootstrapOption,
    timeout: float = typer.Option(30, "--timeout", min=0.1, help="Seconds one message may take before the run fails."),
    out_dir: Optional[Path] = common.OutOption,
    as_json: bool = common.JsonOption,
) -> None:
    """Ping-pong one large message at a time through Kafka with each client, and through HTTP and raw TCP."""
    if acks not in ("0", "1", "all", "-1"):
        abort(f"--acks {acks}: expected 0, 1 or all")
    request = LatencyRequest(
        size=size, payload_file=payload, count=count, warmup=warmup, rounds=rounds,
        clients=[c.strip() for c in clients.split(",") if c.strip()] if clients else None,
        acks=acks, replication_factor=replication_factor,
        topic_config=common.overrides(topic_config, "--topic-config"),
        producer_file=common.config_file(producer_config), consumer_file=common.config_file(consumer_config),
        overrides=common.overrides(x), timeout_s=timeout,
    )
    directory = common.out_dir("latency", out_dir)
    bootstrap = bootstrap_servers or bootstrap_from(request.producer_file, request.consumer_file)
    plan = plan_latency(request, _NoteListener())  # every setting checked before a cluster is touched
    with open_target(bootstrap, on_start=note) as target:
        with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                      console=err, transient=True) as progress:
            try:
                document = run_latency(plan, target, directory, _ProgressListener(progress))
            except LatencyRunFailed as failed:
                progress.stop()
                err.print(latency_table(failed.document))
                for line in run_errors(failed.document):
                    err.print(f"[red]{escape(line)}[/]")
                raise
    if as_json:
        err.print(latency_table(document))
        out.print_json(document.to_json())
    else:
        out.print(latency_table(document))
    note(f"result: {directory / 'result.json'}")

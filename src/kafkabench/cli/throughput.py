"""`kafkabench produce` and `kafkabench consume` (seed 001): throughput and latency under load, with
Apache's own perf tools beside them on request."""

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
from kafkabench.labs.throughput import (ThroughputRequest, ThroughputRunFailed, add_apache_comparison, plan_throughput,
                                        run_throughput)
from kafkabench.report.throughput_table import definitions, summary_table, window_line

ClientOption = typer.Option("confluent", "--client", help="confluent, kafka-python, aiokafka or java.")
CountOption = typer.Option(None, "--count", "-n", min=1, help="Records in all (split over the workers).")
DurationOption = typer.Option(None, "--duration", min=0.1, help="Seconds to run (with --count: whichever comes first).")
IntervalOption = typer.Option(1.0, "--interval", min=0.1, help="Seconds per progress line.")
CompareOption = typer.Option(False, "--compare-apache", help="Also run Apache's perf tool with the same settings and print both.")
TimeoutOption = typer.Option(30, "--timeout", min=1, help="Seconds without any progress before the run is failed.")


class _Lines:
    """One line per merged window, printed above a progress bar (records of --count, or seconds of --duration)."""

    def __init__(self, request: ThroughputRequest) -> None:
        self._bar: Progress | None = None
        self._by_time = request.count is None
        self._total = request.duration_s if self._by_time else request.count
        self._tasks: dict[str, int] = {}
        self._records: dict[str, int] = {}

    def attach(self, bar: Progress) -> None:
        self._bar = bar

    def note(self, message: str) -> None:
        (self._bar.console if self._bar else err).print(f"[dim]{escape(message)}[/]", highlight=False)

    def window(self, role: str, entry: dict) -> None:
        self._bar.console.print(escape(window_line(role, entry)), highlight=False)
        self._records[role] = self._records.get(role, 0) + entry["records"]
        if role not in self._tasks:
            self._tasks[role] = self._bar.add_task(role, total=self._total)
        self._bar.update(self._tasks[role], completed=entry["t_s"] if self._by_time else self._records[role])

    def done(self, role: str, records: int) -> None:
        pass


def _run(request: ThroughputRequest, bootstrap_servers, compare: bool, out_dir, as_json: bool) -> None:
    listener = _Lines(request)
    plan = plan_throughput(request, listener)  # every setting checked before a cluster is touched
    directory = common.out_dir(request.role, out_dir)
    bootstrap = bootstrap_servers or bootstrap_from(request.producer_file, request.consumer_file)
    with open_target(bootstrap, on_start=note) as target:
        with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                      console=err, transient=True) as bar:
            listener.attach(bar)
            try:
                document = run_throughput(plan, target, directory, listener)
            except ThroughputRunFailed as failed:
                bar.stop()
                err.print(summary_table(failed.document))
                raise
            if compare:
                add_apache_comparison(document, plan, target, directory, listener)
    console = err if as_json else out
    console.print(summary_table(document))
    for line in [*definitions(document), *document.notes[len(plan.settings.notes):]]:
        note(line)
    if as_json:
        out.print_json(document.to_json())
    note(f"result: {directory / 'result.json'}")


def produce(
    size: int = typer.Option(100, "--size", min=1, help="Bytes per record (incompressible), without --payload."),
    payload: list[Path] = typer.Option([], "--payload", help="File whose bytes are a record; repeat to send several in turn."),
    count: Optional[int] = CountOption,
    duration: Optional[float] = DurationOption,
    rate: float = typer.Option(-1, "--rate", help="Records/s over all producers on an open-loop schedule; -1: as fast as possible."),
    producers: int = typer.Option(1, "--producers", min=1, help="Producer worker processes."),
    consumers: int = typer.Option(0, "--consumers", min=0, help="Consumer worker processes reading at the same time (e2e under load)."),
    topic: Optional[str] = typer.Option(None, "--topic", help="Topic (created if missing, kept); default: a temporary one."),
    partitions: int = typer.Option(1, "--partitions", min=1, help="Partitions of a topic created here."),
    replication_factor: int = typer.Option(1, "--replication-factor", min=1),
    acks: Optional[str] = typer.Option(None, "--acks", help="0, 1 or all; default: the client's."),
    compression: Optional[str] = typer.Option(None, "--compression", help="none, gzip, snappy, lz4, zstd; default: the client's."),
    client: str = ClientOption,
    topic_config: list[str] = common.TopicConfigOption,
    producer_config: Optional[Path] = common.ProducerConfigOption,
    consumer_config: Optional[Path] = common.ConsumerConfigOption,
    x: list[str] = common.OverrideOption,
    interval: float = IntervalOption,
    timeout: float = TimeoutOption,
    compare_apache: bool = CompareOption,
    bootstrap_servers: Optional[str] = common.BootstrapOption,
    out_dir: Optional[Path] = common.OutOption,
    as_json: bool = common.JsonOption,
) -> None:
    """Produce records as fast as allowed (open loop at --rate), with publish latency, delay and e2e under load."""
    if acks is not None and acks not in ("0", "1", "all", "-1"):
        abort(f"--acks {acks}: expected 0, 1 or all")
    request = ThroughputRequest(
        role="produce", topic=topic, size=size, payload_files=list(payload), count=count, duration_s=duration, rate=rate,
        producers=producers, consumers=consumers, partitions=partitions, replication_factor=replication_factor, acks=acks,
        compression=compression, client=client, topic_config=common.overrides(topic_config, "--topic-config"),
        producer_file=common.config_file(producer_config), consumer_file=common.config_file(consumer_config),
        overrides=common.overrides(x), interval_s=interval, timeout_s=timeout,
    )
    _run(request, bootstrap_servers, compare_apache, out_dir, as_json)


def consume(
    topic: str = typer.Option(..., "--topic", help="The topic to read."),
    count: Optional[int] = CountOption,
    duration: Optional[float] = DurationOption,
    group: Optional[str] = typer.Option(None, "--group", help="Consumer group; default: a new one."),
    start_from: str = typer.Option("earliest", "--from", help="earliest or latest (for a group without offsets)."),
    consumers: int = typer.Option(1, "--consumers", min=1, help="Consumer worker processes in the group."),
    client: str = ClientOption,
    check: bool = typer.Option(False, "--check", help="Every value must be one of the payloads (--size/--payload as produced)."),
    size: int = typer.Option(100, "--size", min=1, help="With --check: the generated payload's size, as given to produce."),
    payload: list[Path] = typer.Option([], "--payload", help="With --check: the payload files given to produce."),
    consumer_config: Optional[Path] = common.ConsumerConfigOption,
    x: list[str] = common.OverrideOption,
    interval: float = IntervalOption,
    timeout: float = TimeoutOption,
    compare_apache: bool = CompareOption,
    bootstrap_servers: Optional[str] = common.BootstrapOption,
    out_dir: Optional[Path] = common.OutOption,
    as_json: bool = common.JsonOption,
) -> None:
    """Read a topic in a group: records/s, MB/s, rebalance time, time to the first record, e2e from stamped records."""
    if start_from not in ("earliest", "latest"):
        abort(f"--from {start_from}: expected earliest or latest")
    request = ThroughputRequest(
        role="consume", topic=topic, size=size, payload_files=list(payload), count=count, duration_s=duration,
        consumers=consumers, client=client, group=group, start_from=start_from, check=check,
        consumer_file=common.config_file(consumer_config), overrides=common.overrides(x), interval_s=interval, timeout_s=timeout,
    )
    _run(request, bootstrap_servers, compare_apache, out_dir, as_json)

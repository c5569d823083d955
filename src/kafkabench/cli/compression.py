"""`kafkabench compression`: format x codec (x level), what each costs and saves (seed 002)."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer
from rich.markup import escape

from kafkabench.cli import common
from kafkabench.cli.output import err, note, out
from kafkabench.cluster.target import open_target
from kafkabench.labs.compression import (CODECS, CompressionRequest, CompressionRunFailed, check_request, parse_levels,
                                         run_compression)
from kafkabench.formats.codecs import FORMATS
from kafkabench.report.compression_table import absolute_table, ratio_table, winners


class _Lines:
    def note(self, message: str) -> None:
        note(message)

    def cell_done(self, cell, repeat: int, summary: dict) -> None:
        err.print(escape(f"repeat {repeat + 1}  {cell.label:22} stored {summary['stored_bytes'] / 1e6:8.2f} MB  "
                         f"{summary['duration_s']:6.2f} s  read {summary['read_rows_per_s'] or 0:>10,.0f} rows/s"), highlight=False)


def _names(value: str) -> list[str]:
    return [item.strip() for item in value.split(",") if item.strip()]


def compression(
    rows: int = typer.Option(100_000, "--rows", min=1, help="Rows per cell."),
    formats: str = typer.Option(",".join(FORMATS), "--formats", help="Comma-separated: json,protobuf,avro."),
    codecs: str = typer.Option(",".join(CODECS), "--codecs", help="Comma-separated: none,gzip,snappy,lz4,zstd."),
    levels: list[str] = typer.Option([], "--levels", help="Per-codec levels (KIP-390), e.g. zstd=1,3,9 (repeatable; librdkafka takes up to 12)."),
    dataset: str = typer.Option("purchases", "--dataset", help="purchases, FILE.csv, or 'images DIR'."),
    client: str = typer.Option("confluent", "--client", help="confluent, kafka-python or aiokafka."),
    repeats: int = typer.Option(1, "--repeats", min=1, help="Runs of every cell, in a different order each time."),
    producer_config: Optional[Path] = common.ProducerConfigOption,
    x: list[str] = common.OverrideOption,
    timeout: float = typer.Option(60, "--timeout", min=1, help="Seconds without progress before a cell fails."),
    bootstrap_servers: Optional[str] = common.BootstrapOption,
    out_dir: Optional[Path] = common.OutOption,
    as_json: bool = common.JsonOption,
) -> None:
    """Store the same rows with every format and codec: stored and wire bytes, time, producer and broker CPU."""
    request = CompressionRequest(rows=rows, formats=_names(formats), codecs=_names(codecs), levels=parse_levels(levels),
                                 dataset=dataset, client=client, repeats=repeats,
                                 producer_file=common.config_file(producer_config), overrides=common.overrides(x),
                                 timeout_s=timeout)
    check_request(request)  # every setting checked before a cluster is touched
    directory = common.out_dir("compression", out_dir)
    with open_target(bootstrap_servers, on_start=note) as target:
        try:
            document = run_compression(request, target, directory, _Lines())
        except CompressionRunFailed as failed:
            err.print(absolute_table(failed.document))
            raise
    console = err if as_json else out
    console.print(absolute_table(document))
    console.print(ratio_table(document))
    for line in [*winners(document), *document.notes]:
        console.print(escape(line), highlight=False)
    if as_json:
        out.print_json(document.to_json())
    note(f"result: {directory / 'result.json'}")

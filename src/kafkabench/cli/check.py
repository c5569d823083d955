"""`kafkabench check`: prove a cluster works end to end with one record, and say what was done."""

from __future__ import annotations

import time
from typing import Optional

import typer

from kafkabench.cli.output import note, out
from kafkabench.cluster.target import open_target
from kafkabench.roundtrip import round_trip


def check(
    bootstrap_servers: Optional[str] = typer.Option(None, "--bootstrap-servers", help="An existing cluster; default: the embedded one (started for this run if none is running)."),
    size: int = typer.Option(1024, "--size", min=1, help="Bytes in the record."),
) -> None:
    """Create a topic, write one record with acks=all, read it back and compare, delete the topic."""
    opened = time.monotonic()
    with open_target(bootstrap_servers, on_start=note) as target:
        if target.started_here:
            brokers = len(target.faults.broker_pids())
            started = f", started in {time.monotonic() - opened:.1f} s" if target.kind == "embedded-temporary" else ""
            out.print(f"cluster   Kafka {target.kafka_version}, {brokers} broker(s) at {target.bootstrap_servers} ({target.kind}{started})")
        else:
            out.print(f"cluster   {target.bootstrap_servers} (external)")
        result = round_trip(target.bootstrap_servers, size_bytes=size)
        out.print(f"topic     created {result.topic} in {result.create_topic_ms:.0f} ms")
        out.print(f"produce   {result.size_bytes} bytes, acks=all, acknowledged at partition {result.partition} offset {result.offset} in {result.produce_ms:.1f} ms")
        out.print(f"consume   read back and compared equal in {result.consume_ms:.0f} ms (includes the consumer group join)")
        out.print("topic     deleted")
        if target.kind == "embedded-temporary":
            note("stopping the cluster started for this run")
    out.print("[green]ok[/]: the cluster accepts writes and serves them back")

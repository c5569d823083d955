"""`kafkabench check`: prove a cluster works end to end with one record, and say what was done."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Optional

import typer

from kafkabench.cli import common
from kafkabench.cli.output import note, out
from kafkabench.config.properties import parse_overrides, read_properties_file
from kafkabench.config.security import is_security_key
from kafkabench.errors import ConfigError


def check(
    bootstrap_servers: Optional[str] = common.BootstrapOption,
    size: int = typer.Option(1024, "--size", min=1, help="Bytes in the record."),
    producer: Optional[Path] = typer.Option(
        None, "--producer-config", "--config", help="Java-style .properties with the connection's settings "
        "(security.protocol, sasl.*, ssl.*, bootstrap.servers), as the labs take it; --config is the same option."),
    consumer: Optional[Path] = typer.Option(
        None, "--consumer-config", help="The same for the consumer's file; the check makes one connection, so where both "
        "files set a key they must agree."),
    overrides: list[str] = typer.Option([], "-X", help="A connection setting KEY=VALUE in Java names (repeatable)."),
) -> None:
    """Create a topic, write one record with acks=all, read it back and compare, delete the topic."""
    from kafkabench.cluster.target import open_target  # the clients load when a command uses them
    from kafkabench.connection_check import check_connection
    from kafkabench.roundtrip import round_trip

    opened = time.monotonic()
    files = [read_properties_file(path) if path else {} for path in (producer, consumer)]
    clashing = sorted(key for key in files[0].keys() & files[1].keys() if files[0][key].value != files[1][key].value)
    if clashing:
        raise ConfigError(f"--producer-config and --consumer-config disagree on {', '.join(clashing)}; check makes one "
                          "connection: give one value")
    given = {**files[0], **files[1], **parse_overrides(overrides, "-X")}
    settings = {key: setting.value for key, setting in given.items() if is_security_key(key)}
    ignored = sorted(key for key in given if not is_security_key(key) and key != "bootstrap.servers")
    if ignored:
        raise ConfigError(f"check takes connection settings only; {', '.join(ignored)} would not be used")
    bootstrap = bootstrap_servers or (given["bootstrap.servers"].value if "bootstrap.servers" in given else None)
    with open_target(bootstrap, settings, on_start=note) as target:
        if target.started_here:
            brokers = len(target.faults.broker_pids())
            started = f", started in {time.monotonic() - opened:.1f} s" if target.kind == "embedded-temporary" else ""
            out.print(f"cluster   Kafka {target.kafka_version}, {brokers} broker(s) at {target.bootstrap_servers} ({target.kind}{started})")
        else:
            out.print(f"cluster   {target.bootstrap_servers} (external)")
        check_connection(target.connection)
        out.print(f"listener  {target.connection.describe()}")
        result = round_trip(target.connection, size_bytes=size)
        out.print(f"topic     created {result.topic} in {result.create_topic_ms:.0f} ms")
        out.print(f"produce   {result.size_bytes} bytes, acks=all, acknowledged at partition {result.partition} offset {result.offset} in {result.produce_ms:.1f} ms")
        out.print(f"consume   read back and compared equal in {result.consume_ms:.0f} ms (includes the consumer group join)")
        out.print("topic     deleted")
        if target.kind == "embedded-temporary":
            note("stopping the cluster started for this run")
    out.print("[green]ok[/]: the cluster accepts writes and serves them back")

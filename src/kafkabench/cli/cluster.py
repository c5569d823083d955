"""`kafkabench cluster ...`: an embedded Apache Kafka cluster you can start, inspect, break and stop."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import Optional

import typer
from rich.table import Table

from kafkabench.cli.output import err, note, out
from kafkabench.cluster.artifacts import DEFAULT_KAFKA_VERSION, kafka_versions

app = typer.Typer(help="Start, inspect, break and stop an embedded Kafka cluster (KRaft, on loopback or an isolated "
                       "network).", no_args_is_help=True)

DirOption = typer.Option(None, "--dir", help="Cluster directory (data, logs, state). Default: $KAFKABENCH_CLUSTER_DIR or the user state dir.")
BrokerOption = typer.Option(..., "--broker", "-b", help="Node id: a broker 1..N, or a dedicated controller 101...")


@app.command()
def up(
    brokers: int = typer.Option(1, "--brokers", "-n", min=1, max=5, help="Number of brokers."),
    controllers: int = typer.Option(0, "--controllers", min=0, max=3,
                                    help="Dedicated KRaft controller nodes (ids 101..); 0: every broker is also a controller."),
    directory: Optional[Path] = DirOption,
    broker_config: list[str] = typer.Option([], "--broker-config", "-c", help="Broker setting KEY=VALUE (repeatable)."),
    port: Optional[int] = typer.Option(None, "--port", help="Client port of broker 1 (others follow); 0 or none: free ports."),
    timeout: float = typer.Option(120, "--timeout", help="Seconds to wait for the cluster to be ready."),
    security: str = typer.Option("plaintext", "--security",
                                 help="Client listener(s): plaintext, ssl, mtls, sasl_plaintext, sasl_ssl; several "
                                      "comma-separated (the first is the brokers' own and the bootstrap servers')."),
    sasl_mechanism: str = typer.Option("SCRAM-SHA-512", "--sasl-mechanism",
                                       help="For sasl_* listeners: SCRAM-SHA-512, SCRAM-SHA-256 or PLAIN."),
    network: str = typer.Option("loopback", "--network",
                                help="loopback: every node on 127.0.0.1. isolated: each node in a network namespace of "
                                     "its own on a private bridge, so network faults (partition, delay, loss, "
                                     "bandwidth) can cut and slow its links (needs root or CAP_NET_ADMIN)."),
    subnet: Optional[str] = typer.Option(None, "--subnet", help="With --network isolated: its private IPv4 subnet, "
                                         "e.g. 10.213.7.0/24; default: a free /24 of 10.213.0.0/16."),
    kafka_version: Optional[str] = typer.Option(None, "--kafka-version", help=f"Apache Kafka version of the brokers: "
                                                f"{', '.join(kafka_versions())}; default: {DEFAULT_KAFKA_VERSION}."),
    jvm_option: list[str] = typer.Option([], "--jvm-option", help="A JVM option of the brokers, after kafkabench's own "
                                         "(repeatable), e.g. --jvm-option=-XX:G1HeapRegionSize=4m."),
) -> None:
    """Start a cluster that keeps running after this command; prints its bootstrap servers."""
    from kafkabench.cluster import EmbeddedCluster
    from kafkabench.cluster.broker_config import parse_broker_overrides
    from kafkabench.cluster.listeners import parse_listeners
    from kafkabench.cluster.variant import BrokerVariant

    variant = BrokerVariant.of(kafka_version, parse_broker_overrides(broker_config), jvm_option)
    variant.check()
    cluster = EmbeddedCluster(brokers=brokers, controllers=controllers, directory=directory, port=port, detach=True,
                              broker_config_overrides=dict(variant.settings), startup_timeout_s=timeout,
                              security=parse_listeners(security, sasl_mechanism), network=network,
                              subnet=subnet, kafka_version=variant.kafka_version, jvm_options=variant.jvm_options)
    started = time.monotonic()
    note(f"starting {brokers} broker(s){f' and {controllers} controller(s)' if controllers else ''} in {cluster.directory} ...")
    cluster.start()
    note(f"Kafka {cluster.kafka_version} ready in {time.monotonic() - started:.1f} s; stop it with `kafkabench cluster down`")
    if cluster.network is not None:
        note(f"isolated network {cluster.network.subnet} on bridge {cluster.network.name}: each node in a namespace of "
             f"its own; `cluster down` removes it")
    if cluster.security.secrets_dir is not None:
        note(f"listener {cluster.security.describe()}; labs connect by themselves, other clients with "
             f"{cluster.security.client_properties()} (Java names; it holds a password: owner-only)")
    out.print(cluster.bootstrap_servers)


@app.command("add-user")
def add_user(
    name: str = typer.Argument(..., help="User name (letters, digits, '.', '_', '-')."),
    password: Optional[str] = typer.Option(None, "--password", help="Default: a random one, written owner-only."),
    directory: Optional[Path] = DirOption,
) -> None:
    """Add a SCRAM user (or, on an mtls cluster, a client certificate); prints the client.properties to use."""
    from kafkabench.cluster.users import add_user as add

    path = add(_attached(directory), name, password)
    note(f"user {name} added; connect with --producer-config/--consumer-config {path}")
    out.print(str(path))


@app.command()
def status(
    directory: Optional[Path] = DirOption,
    as_json: bool = typer.Option(False, "--json", help="Print the status document (see docs/design.md)."),
) -> None:
    """Show the running cluster: bootstrap servers, version, each broker's pid, port and state."""
    report = _attached(directory).status()
    if as_json:
        out.print_json(report.model_dump_json())
        return
    secured = f", {report.security.protocol}" + (f" {report.security.sasl_mechanism}" if report.security.sasl_mechanism else "")
    table = Table(title=f"Kafka {report.kafka_version} at {report.bootstrap_servers} ({report.layout}{secured})",
                  title_justify="left")
    for column in ("node", "roles", "pid", "address" if report.network else "port", "state", "log"):
        table.add_column(column)
    for node in [*report.brokers, *report.controllers]:
        colour = {"running": "green", "paused": "yellow", "dead": "red"}[node.state]
        port = node.port if node.port is not None else f"{node.controller_port} (quorum)"
        where = f"{node.host}:{port}" if report.network else str(port)
        table.add_row(str(node.id), node.roles, str(node.pid or "-"), where, f"[{colour}]{node.state}[/]", node.log)
    out.print(table)
    if report.network:
        out.print(f"isolated network {report.network['subnet']} on bridge {report.network['name']}")
    if report.broker_settings or report.jvm_options:
        out.print("brokers with " + ", ".join([*(f"{k}={v}" for k, v in sorted(report.broker_settings.items())),
                                              *report.jvm_options]), highlight=False)
    for listener in report.security.listeners if report.security and report.security.client_properties else []:
        out.print(f"{listener.name} ({listener.protocol}): {listener.bootstrap_servers}, settings in {listener.client_properties}")


@app.command()
def down(
    directory: Optional[Path] = DirOption,
    timeout: Optional[float] = typer.Option(None, "--timeout", help="Seconds to allow a graceful shutdown before "
                                            "killing; default: the cluster's own grace of a second."),
) -> None:
    """Stop every broker (gracefully, then kill at the timeout); data and logs stay until the next `up`. As root, an
    isolated network whose makers are all gone (a process killed mid-fault, its brokers with it) goes too."""
    from kafkabench.cluster import default_cluster_dir
    from kafkabench.cluster.network.bridge import remove_stale
    from kafkabench.cluster.state import load_state

    if os.geteuid() == 0:
        for name in remove_stale():
            note(f"removed the isolated network {name}, left by a process that was killed")
    target = directory or default_cluster_dir()
    if load_state(target) is None:
        note(f"no embedded cluster in {target}; nothing to stop")
        return
    cluster = _attached(target)
    cluster.stop(timeout_s=timeout)
    note(f"stopped; logs remain in {cluster.directory}")


@app.command()
def logs(
    broker: Optional[int] = typer.Option(None, "--broker", "-b", help="Only this broker; default: all."),
    lines: int = typer.Option(50, "--lines", "-l", min=1, help="How many lines from the end of each log."),
    directory: Optional[Path] = DirOption,
) -> None:
    """Print the end of the broker logs and where the full logs are."""
    cluster = _attached(directory)
    for broker_id in [broker] if broker is not None else cluster.node_ids():
        path = cluster.log_file(broker_id)
        err.print(f"[bold]==> broker {broker_id}: {path}[/]")
        text = path.read_text(errors="replace").splitlines() if path.exists() else []
        sys.stdout.write("".join(f"{line}\n" for line in text[-lines:]))


@app.command()
def kill(broker: int = BrokerOption, directory: Optional[Path] = DirOption) -> None:
    """kill -9 one broker."""
    _attached(directory).kill_broker(broker)
    note(f"broker {broker} killed (SIGKILL)")


@app.command()
def pause(broker: int = BrokerOption, directory: Optional[Path] = DirOption) -> None:
    """Freeze one broker (SIGSTOP): it keeps its sockets but answers nothing."""
    _attached(directory).pause_broker(broker)
    note(f"broker {broker} paused (SIGSTOP); `kafkabench cluster resume --broker {broker}` to continue")


@app.command()
def resume(broker: int = BrokerOption, directory: Optional[Path] = DirOption) -> None:
    """Continue a paused broker (SIGCONT)."""
    _attached(directory).resume_broker(broker)
    note(f"broker {broker} resumed (SIGCONT)")


@app.command()
def restart(
    broker: int = BrokerOption,
    directory: Optional[Path] = DirOption,
    timeout: float = typer.Option(120, "--timeout", help="Seconds to wait for the broker to rejoin."),
) -> None:
    """Stop one broker if it runs, start it again on the same ports and data, wait until it rejoins."""
    _attached(directory).restart_broker(broker, timeout_s=timeout)
    note(f"broker {broker} restarted and registered")


def _attached(directory: Optional[Path]):
    """The running cluster in `directory`; the cluster's modules (and the clients behind them) load only here, so the
    other commands and --help start quickly."""
    from kafkabench.cluster import EmbeddedCluster

    return EmbeddedCluster.attach(directory)

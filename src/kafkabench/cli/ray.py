"""`kafkabench ray up` / `down`: a Ray cluster on this machine (a head and N nodes on loopback, taking only drivers that
hold its token) for `--launcher ray`."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import TYPE_CHECKING, Optional

import typer
from rich.markup import escape

from kafkabench.cli.output import err, note, out

if TYPE_CHECKING:
    from kafkabench.on_ray.local_cluster import LocalRayCluster

app = typer.Typer(help="Start and stop a Ray cluster on this machine for --launcher ray.", no_args_is_help=True)

DirOption = typer.Option(None, "--dir", help="Its directory (state, logs). Default: $KAFKABENCH_RAY_DIR or the user state dir.")


@app.command()
def up(
    nodes: int = typer.Option(3, "--nodes", "-n", min=1, max=16, help="Nodes taking workers, besides the head (which takes none)."),
    cpus: int = typer.Option(1, "--cpus-per-node", min=1, help="CPUs each node offers Ray."),
    directory: Optional[Path] = DirOption,
    insecure: bool = typer.Option(False, "--insecure", help="No token authentication: any process of this machine may "
                                  "connect a driver and run code as you."),
) -> None:
    """Start a head and NODES nodes that keep running after this command; prints the address for --ray-address.
    Token authentication is on, with a token of the cluster's own (mode 0600, in its directory) that kafkabench finds
    for that address, unless --insecure or RAY_AUTH_MODE is set."""
    from kafkabench.on_ray.local_cluster import LocalRayCluster, default_ray_dir

    cluster = LocalRayCluster(nodes, cpus, directory or default_ray_dir(), insecure=insecure)
    started = time.monotonic()
    note(f"starting a Ray head and {nodes} node(s) in {cluster.directory} ...")
    cluster.start()
    found = "" if cluster.directory == default_ray_dir() else f" with KAFKABENCH_RAY_DIR={cluster.directory}"
    note(f"Ray ready in {time.monotonic() - started:.1f} s: use --launcher ray --ray-address {cluster.address}{found}; "
         "stop it with `kafkabench ray down`")
    _say_who_can_connect(cluster, insecure)
    out.print(cluster.address)


@app.command()
def down(directory: Optional[Path] = DirOption) -> None:
    """Stop the Ray cluster `kafkabench ray up` started (each process by its pid) and remove its token."""
    from kafkabench.on_ray.local_cluster import LocalRayCluster

    cluster = LocalRayCluster.attach(directory)
    cluster.stop()
    removed = "; its token removed" if cluster.token_file else ""
    note(f"Ray at {cluster.address} stopped ({len(cluster.processes)} processes){removed}")


def _say_who_can_connect(cluster: LocalRayCluster, insecure: bool) -> None:
    """Where Ray listens, read from its processes' own sockets, and whether a driver needs a token there."""
    from kafkabench.on_ray.local_access import is_loopback

    ports = cluster.open_ports()
    exposed = [port for port in ports if not is_loopback(port.host)]
    if exposed:
        _warn("Ray listens beyond loopback: " + ", ".join(f"{p.host}:{p.port} ({p.process})" for p in exposed))
    else:
        note(f"Ray listens on loopback only: {len(ports)} ports of 127.0.0.1 "
             f"({', '.join(sorted({p.process for p in ports}))})")
    who = "any host that reaches those ports" if exposed else "any process of this machine"
    mode = os.environ.get("RAY_AUTH_MODE")
    if cluster.token_file:
        note(f"token authentication on: its token is in {cluster.token_file} (mode 0600), which kafkabench finds for "
             f"{cluster.address}; `kafkabench ray down` removes it")
    elif insecure or mode != "token":
        why = "--insecure" if insecure else f"RAY_AUTH_MODE={mode} is set here"
        _warn(f"token authentication off ({why}): {who} can connect a driver and run code as you")
    else:
        note("token authentication as RAY_AUTH_MODE=token says, with your own token (RAY_AUTH_TOKEN, "
             "RAY_AUTH_TOKEN_PATH or ~/.ray/auth_token): drivers need it too")


def _warn(message: str) -> None:
    err.print(f"[bold yellow]warning:[/] {escape(message)}")

"""`kafkabench ray up` / `down`: a Ray cluster on this machine (a head and N nodes on loopback) for `--launcher ray`."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Optional

import typer

from kafkabench.cli.output import note, out

app = typer.Typer(help="Start and stop a Ray cluster on this machine for --launcher ray.", no_args_is_help=True)

DirOption = typer.Option(None, "--dir", help="Its directory (state, logs). Default: $KAFKABENCH_RAY_DIR or the user state dir.")


@app.command()
def up(
    nodes: int = typer.Option(3, "--nodes", "-n", min=1, max=16, help="Nodes taking workers, besides the head (which takes none)."),
    cpus: int = typer.Option(1, "--cpus-per-node", min=1, help="CPUs each node offers Ray."),
    directory: Optional[Path] = DirOption,
) -> None:
    """Start a head and NODES nodes that keep running after this command; prints the address for --ray-address."""
    from kafkabench.on_ray.local_cluster import LocalRayCluster, default_ray_dir

    cluster = LocalRayCluster(nodes, cpus, directory or default_ray_dir())
    started = time.monotonic()
    note(f"starting a Ray head and {nodes} node(s) in {cluster.directory} ...")
    cluster.start()
    note(f"Ray ready in {time.monotonic() - started:.1f} s: use --launcher ray --ray-address {cluster.address}; "
         "stop it with `kafkabench ray down`")
    out.print(cluster.address)


@app.command()
def down(directory: Optional[Path] = DirOption) -> None:
    """Stop the Ray cluster `kafkabench ray up` started (each process by its pid)."""
    from kafkabench.on_ray.local_cluster import LocalRayCluster

    cluster = LocalRayCluster.attach(directory)
    cluster.stop()
    note(f"Ray at {cluster.address} stopped ({len(cluster.processes)} processes)")

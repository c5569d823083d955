"""Which cluster a run talks to: the one the user named, the running embedded one, or one started for the run."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from kafkabench.cluster.embedded import EmbeddedCluster, default_cluster_dir
from kafkabench.cluster.state import load_state


@dataclass(frozen=True)
class Target:
    bootstrap_servers: str
    kind: str  # "external", "embedded" (already running) or "embedded-temporary" (started for this run)
    cluster: EmbeddedCluster | None = None  # set for embedded targets: broker pids, versions, fault hooks


@contextlib.contextmanager
def open_target(
    bootstrap_servers: str | None,
    cluster_dir: Path | None = None,
    on_start: Callable[[str], None] = lambda message: None,
    brokers: int = 1,
) -> Iterator[Target]:
    """Yield the cluster to use; a cluster started here (with `brokers` nodes) is stopped on the way out,
    whatever happened."""
    if bootstrap_servers:
        yield Target(bootstrap_servers, "external")
        return
    directory = cluster_dir or default_cluster_dir()
    if load_state(directory) is not None:
        running = EmbeddedCluster.attach(directory)
        if any(broker.alive for broker in running.status().brokers):
            yield Target(running.bootstrap_servers, "embedded", running)
            return
    on_start(f"no cluster given and none running: starting an embedded one ({brokers} broker{'s' * (brokers > 1)}) for this run")
    with EmbeddedCluster(brokers=brokers, directory=directory) as cluster:
        yield Target(cluster.bootstrap_servers, "embedded-temporary", cluster)

"""The embedded Apache Kafka cluster: pinned jars, Java discovery, broker processes and their state."""

from __future__ import annotations

from typing import TYPE_CHECKING

__all__ = ["EmbeddedCluster", "default_cluster_dir"]

if TYPE_CHECKING:
    from kafkabench.cluster.embedded import EmbeddedCluster, default_cluster_dir


def __getattr__(name: str):
    """The cluster's classes load on first use, so that a command that starts none (`--help`, a refusal, `compare`)
    does not import the clients and the certificate tools behind them."""
    if name in __all__:
        from kafkabench.cluster import embedded

        return getattr(embedded, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

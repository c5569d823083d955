"""The embedded Apache Kafka cluster: pinned jars, Java discovery, broker processes and their state."""

from kafkabench.cluster.embedded import EmbeddedCluster, default_cluster_dir

__all__ = ["EmbeddedCluster", "default_cluster_dir"]

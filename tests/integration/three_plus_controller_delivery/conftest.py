"""The delivery lab's fault tests (producers, consumers, copiers) on a cluster of their own: 3 brokers beside a
dedicated controller (tests/integration/faulty_cluster.py), beside three_plus_controller/'s."""

from tests.integration.faulty_cluster import cluster, every_node_running, three_plus_controller  # noqa: F401

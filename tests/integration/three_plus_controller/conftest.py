"""The fault tests of the durability lab, the monitor and the admin client on one cluster: 3 brokers beside a
dedicated controller (tests/integration/faulty_cluster.py)."""

from tests.integration.faulty_cluster import cluster, every_node_running, three_plus_controller  # noqa: F401

"""A real Apache Kafka in an application's own tests: kafkabench's pytest plugin (`kafkabench.testing.plugin`, on
with `-p kafkabench`), its faults (`cluster.KafkaCluster`) and the delivery check of an application's output
(`check_delivery`). See docs/testing.md.

This package is imported by pytest's entry point in every test run of a project that has kafkabench installed:
it imports nothing heavy until a name is used."""

from __future__ import annotations

from typing import TYPE_CHECKING

__all__ = ["ClusterShape", "Delivery", "KafkaCluster", "Record", "check_delivery"]

if TYPE_CHECKING:
    from kafkabench.testing.cluster import KafkaCluster
    from kafkabench.testing.delivery import Delivery, Record, check_delivery
    from kafkabench.testing.settings import ClusterShape


def __getattr__(name: str):
    if name == "KafkaCluster":
        from kafkabench.testing import cluster

        return cluster.KafkaCluster
    if name == "ClusterShape":
        from kafkabench.testing import settings

        return settings.ClusterShape
    if name in __all__:
        from kafkabench.testing import delivery

        return getattr(delivery, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

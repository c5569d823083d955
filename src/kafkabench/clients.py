"""The clients kafkabench can measure, which of them this machine can run, and how to start each worker."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from importlib.util import find_spec

from kafkabench.errors import ConfigError, JavaNotFoundError
from kafkabench.workers.adapters import ADAPTERS

PYTHON_KAFKA_CLIENTS = tuple(ADAPTERS)  # confluent, kafka-python, aiokafka
KAFKA_CLIENTS = (*PYTHON_KAFKA_CLIENTS, "java")
PSEUDO_CLIENTS = ("http", "tcp")  # baselines without Kafka: a REST call and the raw-socket floor
ALL_CLIENTS = (*KAFKA_CLIENTS, *PSEUDO_CLIENTS)
EXTRA_FOR = {"aiokafka": "pip install 'kafkabench[aiokafka]'"}


@dataclass(frozen=True)
class Availability:
    client: str
    available: bool
    reason: str = ""


def check_names(names: list[str]) -> list[str]:
    for name in names:
        if name not in ALL_CLIENTS:
            raise ConfigError(f"unknown client {name!r}; known clients: {', '.join(ALL_CLIENTS)}")
    return names


def availability(client: str) -> Availability:
    if client in ADAPTERS:
        library = ADAPTERS[client][1]
        if find_spec(library) is None:
            return Availability(client, False, f"{library} is not installed ({EXTRA_FOR.get(client, 'pip install ' + client)})")
        return Availability(client, True)
    if client == "java":
        from kafkabench.cluster.java import find_java

        try:
            java = find_java()
        except JavaNotFoundError as exc:
            return Availability(client, False, str(exc))
        if java.javac is None:
            return Availability(client, False, f"the java client needs a JDK (javac) to build its worker; found only a runtime at {java.executable}")
        return Availability(client, True)
    return Availability(client, client in PSEUDO_CLIENTS, "" if client in PSEUDO_CLIENTS else "unknown client")


def worker_command(client: str) -> list[str]:
    """The argv of one worker process for `client` (the Java worker is compiled on first use)."""
    if client != "java":
        return [sys.executable, "-m", "kafkabench.workers.python_worker"]
    from kafkabench.cluster.artifacts import JarCache
    from kafkabench.cluster.java import find_java
    from kafkabench.workers.java_build import java_worker_command

    return java_worker_command(find_java(), JarCache().ensure())

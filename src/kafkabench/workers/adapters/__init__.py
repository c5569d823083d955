"""Kafka client adapters: each library behind one small interface (adapters.base.KafkaClient)."""

from __future__ import annotations

import importlib
from importlib.util import find_spec

# client name -> (module holding the adapter, the library it needs)
ADAPTERS = {
    "confluent": ("kafkabench.workers.adapters.confluent", "confluent_kafka"),
    "kafka-python": ("kafkabench.workers.adapters.kafka_python", "kafka"),
    "aiokafka": ("kafkabench.workers.adapters.aiokafka", "aiokafka"),
}


def installed_python_clients() -> list[str]:
    return [name for name, (_, library) in ADAPTERS.items() if find_spec(library) is not None]


def load_adapter(name: str):
    module, _ = ADAPTERS[name]
    return importlib.import_module(module).Adapter()

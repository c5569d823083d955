"""kafkabench: a Kafka performance and trade-off lab."""

__version__ = "0.1.0"

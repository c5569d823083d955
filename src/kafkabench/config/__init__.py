"""Kafka client and topic settings: Java-style names (or a library's own, `librdkafka:NAME`) in, each client's
own names out, checked at the edge."""

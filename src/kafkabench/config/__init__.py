"""Kafka client and topic settings: Java-style names in, each client's own names out, checked at the edge."""

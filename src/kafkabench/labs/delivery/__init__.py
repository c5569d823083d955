"""The delivery lab (seed 004): which producer modes and broker faults lose, duplicate or reorder messages,
counted exactly, in the manner of Kafka's VerifiableProducer + validate_delivery and Jepsen's Kafka checker.

`history` is what each producer records of its own sends (one compact file per producer); `checker` reads
those histories against what a fresh read_committed consumer read back and counts every anomaly. Both are
pure: no Kafka client, no cluster.
"""

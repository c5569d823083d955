"""What every number in a report means: one source of truth for the HTML report's definitions, its column
and axis tooltips, and anyone else who needs the wording. These are the ones every lab shares; a lab adds its own
(Lab.definitions), and the report puts them together (report.collect).

The wording follows docs/design.md ("Measurement definitions") and the lab pages' "How it is measured" and
"What is measured" sections; change it there and here together.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Definition:
    key: str  # the name in result files (`stats.<key>`, `counters.<key>`, ...) or in the tables
    name: str  # as tables and charts label it
    unit: str
    text: str
    labs: tuple[str, ...] = ()  # where it is measured; empty: everywhere


DEFINITIONS: tuple[Definition, ...] = (
    Definition("e2e", "e2e (ping-pong)", "ms",
               "One message in flight. Clock starts before the send call, stops when the consumer in the same process "
               "holds the whole value. Split into produce (send call -> ack) and consume (ack -> value in hand). "
               "The first message is reported separately as cold; warm-up messages are excluded from the stats.",
               ("latency",)),
    Definition("produce", "produce", "ms", "Send call to the acknowledgement (part of one ping-pong e2e).", ("latency",)),
    Definition("consume", "consume", "ms",
               "Acknowledgement to value in hand (part of one ping-pong e2e). For each message produce + consume = e2e "
               "exactly; their medians need not add up to the e2e median.", ("latency",)),
    Definition("cold", "cold", "ms",
               "e2e of the very first message: connections, metadata, buffers, JIT all included. Reported alone; then "
               "--warmup messages that are not recorded; then --count measured messages.", ("latency",)),
    Definition("floor", "floor (tcp)", "ms",
               "The tcp pseudo-client: the same payload over a raw loopback TCP socket between two processes, which "
               "stamps and answers the same way; shown beside every latency table as the physical limit on this "
               "machine. Kafka moves the value twice (into the broker and out of it), so a ratio near 2 is the least a "
               "broker in the middle can cost.", ("latency",)),
    Definition("x_floor", "x floor", "ratio",
               "e2e p50 divided by the tcp e2e p50: how many times the physical floor of this machine.", ("latency",)),
    Definition("http", "http", "ms",
               "A keep-alive http.client POSTs the payload to a stdlib http.server in another process, the seed's REST "
               "service. The server stamps the moment it holds the whole body (end of produce), answers at once, and "
               "checks the bytes after answering; consume is the answer's trip back.", ("latency",)),
    Definition("publish_latency", "publish latency", "ms",
               "Actual send call -> ack callback, every record, microsecond HdrHistogram.", ("produce",)),
    Definition("publish_delay", "publish delay", "ms",
               "Intended send time (from the open-loop schedule) -> actual send call; only with --rate. A stall is never "
               "absorbed by re-planning: it shows here (coordinated omission made visible).", ("produce",)),
    Definition("e2e_under_load", "e2e (under load)", "ms",
               "Producer stamps the intended send time into a header (kb-sent-ns); a consumer on the same host subtracts "
               "on the same monotonic clock. Across hosts, wall clock is used and the result says so.",
               ("produce", "consume")),
    Definition("percentiles", "p50 ... max", "ms",
               "Percentiles of the HdrHistogram of all measured values (1 us .. 1 h, 3 significant digits), computed "
               "only after merging, never averaged."),
    Definition("records_per_s", "records/s", "records/s",
               "Acknowledged (produce) or received (consume) records over the wall time of all workers of the role: "
               "start signal -> last ack; start signal -> last record.", ("produce", "consume", "compression")),
    Definition("payload_mb_per_s", "MB/s", "MB/s",
               "Payload bytes over the same wall time as records/s. MB = 2^20 bytes, as Apache's tools count.",
               ("produce", "consume")),
    Definition("stored_bytes", "stored bytes", "MB",
               "Bytes on disk of the topic (DescribeLogDirs once the log stops growing). MB = 10^6 bytes.",
               ("compression",)),
    Definition("wire_bytes", "wire bytes", "MB",
               "What the producer sent to the brokers, protocol overhead included (librdkafka statistics, Java client "
               "metrics; the Python clients do not count it and it is left out, not reported as 0).",
               ("produce", "compression")),
    Definition("payload_bytes", "payload bytes", "MB", "The values' own bytes, as produced, before any codec.",
               ("produce", "consume", "compression")),
    Definition("cpu_s", "cpu s", "s",
               "CPU time of the client's worker process (user + system): during the measured rounds in the latency lab, "
               "the whole run in the others (the producer's in the compression lab).", ()),
    Definition("cpu_per_msg", "cpu/msg", "ms",
               "CPU time of the client's worker process during the measured rounds, per message (the server side of "
               "http and tcp excluded).", ("latency",)),
    Definition("broker_cpu_s", "broker cpu s", "s",
               "CPU time of the embedded brokers' processes during the produce phase; on your cluster: unavailable, "
               "shown as -, not 0.", ("compression",)),
    Definition("duration_s", "duration s", "s",
               "Latency lab: the measured rounds. Produce and compression: start signal -> last ack. "
               "Consume (fetch time): from the start signal (partitions already assigned) to the last record."),
    Definition("read_rows_per_s", "read+decode rows/s", "rows/s",
               "The rate at which a consumer reads and decodes every row back.", ("compression",)),
    Definition("rebalance_s", "rebalance s", "s", "Consumer: subscribe -> partitions assigned (the slowest consumer).",
               ("consume",)),
    Definition("first_record_s", "first record s", "s", "Consumer: start -> first record.", ("consume",)),
    Definition("idle_s", "idle s", "s",
               "Consumer: after the first record, time in polls that brought nothing (each stretch from the first "
               "empty poll to the poll that brought records again).", ("consume",)),
    Definition("stalls", "stalls", "count",
               "Consumer: idle stretches of 0.5 s or more. Reading a backlog they are the client not fetching "
               "(librdkafka's fetch.queue.backoff.ms, 1 s, whenever 100,000 records are queued): records/s then "
               "counts how many fell into the run.", ("consume",)),
    Definition("errors", "errors", "count",
               "Counted by type (errors.<Type> in the result); per-message failures are counted as data, not raised."),
    Definition("out_of_range", "out_of_range", "count",
               "Every value that falls outside the histogram's range (1 us .. 1 h) is counted, never dropped silently."),
    Definition("negative", "negative", "count",
               "Of out_of_range, the latencies below zero: an e2e latency whose producer and consumer ran on two hosts "
               "can come out below zero when their clocks disagree by more than the measured bound. Counted, never "
               "clamped to 0, and kept out of the percentiles."),
    Definition("max_rss_mb", "max RSS MB", "MB", "Peak resident memory of the worker process."),
)

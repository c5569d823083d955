"""Apache's own perf tools (ProducerPerformance, ConsumerPerformance) from the cached jars, run with the
same settings on the same broker, their output parsed so both can be printed side by side.

Where their definitions differ from kafkabench's: ProducerPerformance times each record from the send
call (a record that waited for the buffer is timed from when it got in: coordinated omission hidden),
in whole milliseconds, and keeps a sample of the latencies for percentiles; with --record-size its values
are random uppercase letters, which every codec compresses far better than real data. ConsumerPerformance
measures no latency; its MB is 2^20 bytes, like kafkabench's; its nMsg.sec includes the group join, its
fetch.nMsg.sec does not: kafkabench's consumers start counting once their partitions are assigned, so the
fetch rate is the one compared.
"""

from __future__ import annotations

import re
import subprocess
import tempfile
from dataclasses import dataclass, field

import uuid
from pathlib import Path

from kafkabench.admin import KafkaAdmin
from kafkabench.cluster.java import tool_command as java_command
from kafkabench.cluster.target import Target
from kafkabench.config.translate import translate
from kafkabench.core.events import Listener
from kafkabench.core.results import ResultDocument, Run, write_result
from kafkabench.errors import KafkabenchError
from kafkabench.labs.throughput.plan import ThroughputPlan

_PRODUCER_SUMMARY = re.compile(
    r"(?P<records>\d+) records sent, (?P<rps>[\d.]+) records/sec \((?P<mbps>[\d.]+) MB/sec\), "
    r"(?P<avg>[\d.]+) ms avg latency, (?P<max>[\d.]+) ms max latency, (?P<p50>\d+) ms 50th, "
    r"(?P<p95>\d+) ms 95th, (?P<p99>\d+) ms 99th, (?P<p999>\d+) ms 99.9th"
)


class ApacheToolFailed(KafkabenchError):
    """An Apache perf tool did not run or printed nothing kafkabench can read."""


@dataclass
class ApacheReport:
    tool: str
    records_per_s: float
    mb_per_s: float
    figures: dict[str, float] = field(default_factory=dict)
    command: list[str] = field(default_factory=list)


def parse_producer_performance(output: str) -> dict[str, float]:
    matches = list(_PRODUCER_SUMMARY.finditer(output))
    if not matches:
        raise ApacheToolFailed(f"ProducerPerformance printed no summary: {output.strip()[-300:]!r}")
    found = matches[-1]  # the last line is the whole run; earlier ones are its periodic reports
    return {"records": int(found["records"]), "records_per_s": float(found["rps"]), "mb_per_s": float(found["mbps"]),
            "avg_ms": float(found["avg"]), "max_ms": float(found["max"]), "p50_ms": int(found["p50"]),
            "p95_ms": int(found["p95"]), "p99_ms": int(found["p99"]), "p999_ms": int(found["p999"])}


def parse_consumer_performance(output: str) -> dict[str, float]:
    lines = [line for line in output.splitlines() if line.strip()]
    for index, line in enumerate(lines):
        if line.startswith("start.time") and index + 1 < len(lines):
            names = [name.strip() for name in line.split(",")]
            values = [value.strip() for value in lines[index + 1].split(",")]
            row = dict(zip(names, values))
            return {"mb": float(row["data.consumed.in.MB"]), "mb_per_s": float(row["MB.sec"]),
                    "records": int(row["data.consumed.in.nMsg"]), "records_per_s": float(row["nMsg.sec"]),
                    "rebalance_ms": float(row["rebalance.time.ms"]), "fetch_ms": float(row["fetch.time.ms"]),
                    "fetch_mb_per_s": float(row["fetch.MB.sec"]), "fetch_records_per_s": float(row["fetch.nMsg.sec"])}
    raise ApacheToolFailed(f"ConsumerPerformance printed no result row: {output.strip()[-300:]!r}")


def _run(command: list[str], timeout_s: float, tool: str) -> str:
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout_s, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired as exc:
        raise ApacheToolFailed(f"{tool} did not finish within {timeout_s:g} s") from exc
    if done.returncode != 0:
        last = (done.stderr.strip() or done.stdout.strip()).splitlines()[-1:] or ["no output"]
        raise ApacheToolFailed(f"{tool} exited with {done.returncode}: {last[0][:200]}")
    return done.stdout


def producer_performance(bootstrap: str, topic: str, records: int, size: int, rate: float,
                         producer_config: dict[str, str], timeout_s: float = 900) -> ApacheReport:
    props = [f"{key}={value}" for key, value in {"bootstrap.servers": bootstrap, **producer_config}.items()]
    command = [*java_command("org.apache.kafka.tools.ProducerPerformance"), "--topic", topic, "--num-records", str(records),
               "--record-size", str(size), "--throughput", str(int(rate) if rate > 0 else -1), "--producer-props", *props]
    figures = parse_producer_performance(_run(command, timeout_s, "ProducerPerformance"))
    return ApacheReport("ProducerPerformance", figures["records_per_s"], figures["mb_per_s"], figures, command)


def consumer_performance(bootstrap: str, topic: str, records: int, group: str, consumer_config: dict[str, str],
                         timeout_s: float = 900) -> ApacheReport:
    with tempfile.NamedTemporaryFile("w", suffix=".properties", prefix="kafkabench-consumer-") as props:
        props.write("".join(f"{key}={value}\n" for key, value in consumer_config.items()))
        props.flush()
        command = [*java_command("org.apache.kafka.tools.ConsumerPerformance"), "--bootstrap-server", bootstrap,
                   "--topic", topic, "--messages", str(records), "--group", group, "--consumer.config", props.name,
                   "--timeout", str(int(timeout_s * 1000))]
        figures = parse_consumer_performance(_run(command, timeout_s + 30, "ConsumerPerformance"))
    return ApacheReport("ConsumerPerformance", figures["fetch_records_per_s"], figures["fetch_mb_per_s"], figures, command)


def add_apache_comparison(document: ResultDocument, plan: ThroughputPlan, target: Target, out_dir: Path,
                          listener: Listener) -> None:
    """Run Apache's tool for the same job on the same broker; its figures become one more run."""
    scenario = plan.scenario
    ours = document.runs[0]
    records = int(ours.counters.get("acked" if plan.role == "produce" else "received", 0)) or (scenario.count or 0)
    if records == 0:
        listener.note("no records measured: nothing to compare with Apache's tool")
        return
    with KafkaAdmin(target.connection, timeout_s=scenario.timeout) as admin:
        if plan.role == "produce":
            topic = f"kafkabench-apache-{uuid.uuid4().hex[:8]}"
            admin.create_topic(topic, scenario.partitions, scenario.replication_factor, plan.settings.values("topic"))
            try:
                listener.note(f"running Apache ProducerPerformance: {records} records of {len(plan.payloads[0])} bytes")
                report = producer_performance(target.bootstrap_servers, topic, records, len(plan.payloads[0]),
                                              scenario.rate, _java_settings(plan, "producer"))
            finally:
                admin.delete_topic(topic)
        else:
            listener.note(f"running Apache ConsumerPerformance: {records} records from {document.params['topic']}")
            report = consumer_performance(target.bootstrap_servers, document.params["topic"], records,
                                          f"kafkabench-apache-{uuid.uuid4().hex[:8]}", _java_settings(plan, "consumer"))
    document.runs.append(Run(
        client="apache", client_version=document.cluster.get("kafka_version", ""), scenario=plan.role,
        params={"tool": report.tool, "records": records, "command": " ".join(report.command[-14:])},
        throughput={"records_per_s": report.records_per_s, "payload_mb_per_s": report.mb_per_s},
        reported=report.figures,
    ))
    write_result(document, out_dir)


def _java_settings(plan, role: str) -> dict[str, str]:
    """What a Java client takes of the settings: a library's own names (`librdkafka:...`) are not for Apache's tools."""
    return translate("java", role, plan.settings.values(role)).config

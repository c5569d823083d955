"""Apache's ProducerPerformance beside a java cell of the durability lab (`--compare-apache`).

It runs right after the cell's measured run, on the same topic (so the same partitions, replication factor,
min.insync.replicas and partition leaders, described once for both), with the same record count, record size
and rate, and the producer settings kafkabench's Java worker got, in Java names: the scenario's producer
settings, the cell's acks and enable.idempotence, the overrides, and what the record size made kafkabench
raise. Its figures become one more run of the cell, labelled as a cell of its own
(`durable java (apache ProducerPerformance)`), so the report summarises it in its own row beside the java one.

Where the two differ (labs/throughput/apache.py): ProducerPerformance times each record from the send call
(a record that waited for buffer space is timed from when it got in: coordinated omission hidden), in whole
milliseconds, with percentiles from a sample of the latencies, so they stay in `reported` as it printed
them and fill no latency statistic; its values are random uppercase letters (compressible, unlike
kafkabench's random bytes: it matters only with a compression.type); it runs with no consumer alongside,
where the cell's run has one reading, and has no warm-up of its own (the topic is warm from the cell's
run). Its records/s are its count over its own elapsed time; the run's duration is derived from the two.
"""

from __future__ import annotations

from kafkabench.cluster.target import Target
from kafkabench.config.redact import redact, shown
from kafkabench.config.translate import translate
from kafkabench.core.events import SILENT
from kafkabench.core.results import Run
from kafkabench.errors import KafkabenchError
from kafkabench.labs.durability.cells import Cell
from kafkabench.labs.throughput import apache as apache_tools
from kafkabench.labs.throughput.plan import plan_throughput
from kafkabench.labs.throughput.scenario import ProduceScenario

TOOL = "ProducerPerformance"
JVM_START_S = 60  # ProducerPerformance's JVM start and metadata fetch, on a loaded 2-core machine
DEFAULT_DEADLINE_S = 900  # producer_performance's own


def apache_label(cell_label: str) -> str:
    return f"{cell_label} (apache {TOOL})"


def java_producer_settings(produce: ProduceScenario) -> dict[str, str]:
    """The producer settings kafkabench's Java worker got for `produce`, made the same way (plan_throughput)."""
    return translate("java", "producer", plan_throughput(produce, SILENT).settings.values("producer")).config


def producer_performance_run(cell: Cell, produce: ProduceScenario, runs: list[Run], target: Target) -> Run:
    """ProducerPerformance on `produce.topic` for the job the cell's produce run in `runs` just did. A tool
    that fails gives a run with the error: the java run beside it stands either way."""
    ours = next((run for run in runs if run.scenario == "produce"), None)
    records = (int(ours.counters.get("acked", 0)) if ours else 0) or produce.count or 0
    settings = java_producer_settings(produce)
    params = {"cell": apache_label(cell.label), "tool": TOOL, "topic": produce.topic, "records": records,
              "size_bytes": produce.size, "rate": produce.rate}
    config = {"producer": redact(settings), "topic": cell.topic_settings()}
    failed = Run(client="apache", client_version=target.kafka_version or "", scenario="produce", params=params, config=config)
    if not records:
        return failed.model_copy(update={"error": "the cell's run acknowledged no records: nothing to compare with"})
    try:
        report = apache_tools.producer_performance(target.bootstrap_servers, produce.topic, records, produce.size,
                                                   produce.rate, settings, deadline_s(ours, produce))
    except apache_tools.ApacheToolFailed as exc:  # names the tool and what it printed
        return failed.model_copy(update={"error": str(exc)})
    except KafkabenchError as exc:  # no Java, no jars
        return failed.model_copy(update={"error": f"{TOOL} could not start: {exc}"})
    return tool_run(report, params, config, target.kafka_version or "")


def tool_run(report: apache_tools.ApacheReport, params: dict, config: dict, kafka_version: str) -> Run:
    acked = int(report.figures.get("records", params["records"]))
    return Run(
        client="apache", client_version=kafka_version, scenario="produce",
        params={**params, "command": shown_command(report.command)},
        throughput={"records_per_s": report.records_per_s, "payload_mb_per_s": report.mb_per_s},
        counters={"acked": acked},
        # the report's ms/msg is duration / count: ProducerPerformance's elapsed time is count / its records/s
        duration_s=acked / report.records_per_s if report.records_per_s else 0.0,
        config=config,
        reported=report.figures,
    )


def deadline_s(ours: Run | None, produce: ProduceScenario) -> float:
    """How long ProducerPerformance may take: three times kafkabench's time for the same job (or, without
    one, for the records at the asked rate), plus its JVM start and the cell's timeout; with neither, the
    tool's default deadline."""
    if ours is not None and ours.duration_s > 0:
        expected = ours.duration_s
    elif produce.rate > 0 and produce.count:
        expected = produce.count / produce.rate
    else:
        return DEFAULT_DEADLINE_S
    return 3 * expected + JVM_START_S + produce.timeout


def shown_command(command: list[str]) -> str:
    """The tool's arguments as a result may keep them: from its main class on, secrets in the props redacted."""
    start = next((i for i, arg in enumerate(command) if arg.endswith(f".{TOOL}")), 0)
    shown_args, in_props = [], False
    for arg in command[start:]:
        in_props = in_props or arg == "--producer-props"
        if in_props and "=" in arg:
            key, value = arg.split("=", 1)
            arg = f"{key}={shown(key, value)}"
        shown_args.append(arg)
    return " ".join(shown_args)

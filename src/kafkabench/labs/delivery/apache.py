"""Apache's VerifiableProducer beside kafkabench's own clients (`--compare-apache`): the producer Kafka's own system
tests judge with `validate_delivery`, run under a cell's topic and producer settings and the same faults, on a topic
of its own; its `producer_send_success` / `producer_send_error` lines become a history that the same checker judges.

VerifiableProducer sends the numbers 0..n-1 as text values, asynchronously, and closes the producer at the end
(one mode: async-close). Its lines say which sends were acknowledged (partition, offset) and which failed; a
TimeoutException says nothing of the outcome and stays unknown, as it does for kafkabench's workers; a number it
never reported stays unknown. Its own summary (`tool_data`) is kept in `reported` as it printed it.
"""

from __future__ import annotations

import dataclasses
import json
import subprocess
import tempfile
import threading
import time
from pathlib import Path

import numpy as np

from kafkabench.cluster.target import Target
from kafkabench.config.redact import redact
from kafkabench.config.translate import translate
from kafkabench.core.results import Run
from kafkabench.errors import KafkabenchError
from kafkabench.labs.delivery.cells import DeliveryCell, cell_params, cell_settings
from kafkabench.labs.delivery.faults import FaultRun
from kafkabench.labs.delivery.liveness import progress_timeline
from kafkabench.core.delivery_history import History
from kafkabench.labs.delivery.judge import ClusterUnhealed, judge
from kafkabench.labs.delivery.readback import of_values
from kafkabench.labs.delivery.scenario import DeliveryScenario
from kafkabench.labs.throughput.apache import java_command
from kafkabench.labs.topic_check import fresh_topic
from kafkabench.processes import popen

TOOL = "VerifiableProducer"
PRODUCER_ID = 1  # its numbers carry no producer: the read-back gives them this one
MODE = "async-close"
TIMEOUTS = ("TimeoutException",)
START_S = 60  # its JVM start and first metadata on a loaded 2-core machine


def decode_numbers(values: list[bytes | None]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """VerifiableProducer's values: the message number as decimal text. Anything else is foreign."""
    ours = np.array([value is not None and 0 < len(value) <= 19 and value.isdigit() for value in values], bool)
    sequence = np.array([int(value) if is_ours else -1 for value, is_ours in zip(values, ours)], np.int64)
    return np.full(len(values), PRODUCER_ID, np.uint16), sequence, ours


def verifiable_producer_run(cell: DeliveryCell, scenario: DeliveryScenario, target: Target, topic: str, out_dir: Path,
                            index: int) -> Run:
    cell = dataclasses.replace(cell, mode=MODE)
    settings = cell_settings(cell, scenario)
    producer = translate("java", "producer", settings.values("producer")).config
    run = Run(client="apache", client_version=target.kafka_version or "", scenario="delivery",
              params={**cell_params(cell, scenario), "tool": TOOL},
              config={"producer": redact(producer), "topic": settings.values("topic")})
    history = History(PRODUCER_ID, scenario.count)
    s = cell.settings
    try:
        with fresh_topic(target.connection, topic, s.partitions, s.replication_factor, s.min_isr,
                         settings.values("topic"), scenario.timeout) as description:
            run.params["topic_description"] = description
            _produce(run, history, producer, scenario, target, topic, s.acks)
            judge(run, target, topic, [history], scenario.heal_timeout, s.idempotence, out_dir, None, index,
                  decode=of_values(decode_numbers))
    except ClusterUnhealed:
        raise
    except KafkabenchError as exc:
        run.error = run.error or str(exc)
    return run


def _produce(run: Run, history: History, producer: dict, scenario: DeliveryScenario, target: Target, topic: str,
             acks: str) -> None:
    with tempfile.NamedTemporaryFile("w", suffix=".properties", prefix="kafkabench-verifiable-") as props:
        props.write("".join(f"{key}={value}\n" for key, value in producer.items() if key != "acks"))
        props.flush()
        command = [*java_command(f"org.apache.kafka.tools.{TOOL}"), "--topic", topic, "--max-messages",
                   str(scenario.count), "--acks", "-1" if acks == "all" else acks, "--producer.config", props.name,
                   "--throughput", str(int(scenario.rate) if scenario.rate > 0 else -1),
                   "--bootstrap-server", target.bootstrap_servers]
        reader = _Lines(history)
        faults = FaultRun.of(scenario, target.faults, target.connection, topic)
        faults.acknowledged = lambda: history.acked
        process = popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        try:
            reader.follow(process, faults, scenario.timeout)
        finally:
            if process.poll() is None:
                process.kill()
            process.wait(10)
            faults.record(run)
    run.reported = reader.summary
    run.duration_s = reader.duration_s
    if reader.started is not None:
        run.timeline = progress_timeline({"acknowledged": [reader.points]}, reader.started, reader.ended)
    if reader.problem:
        run.error = reader.problem
    elif process.returncode != 0:
        run.error = f"{TOOL} exited with {process.returncode}"
    elif scenario.faults_must_fire:
        run.error = faults.shortfall()


class _Lines:
    """Its stdout, line by line, into the history; faults start with its `startup_complete`."""

    def __init__(self, history: History) -> None:
        self.history = history
        self.summary: dict = {}
        self.points: list[tuple[float, int]] = []  # (monotonic, acknowledged so far), from its startup on
        self.started: float | None = None
        self.ended = 0.0
        self.duration_s = 0.0
        self.problem = ""

    def follow(self, process: subprocess.Popen, faults, silence_s: float) -> None:
        lines: list[str | None] = []
        ready = threading.Event()

        def pump() -> None:
            for line in process.stdout:
                lines.append(line)
                ready.set()
            lines.append(None)
            ready.set()

        threading.Thread(target=pump, daemon=True, name="kafkabench-verifiable").start()
        start = last = time.monotonic()
        started, taken = None, 0
        while True:
            ready.wait(0.2)
            ready.clear()
            now = time.monotonic()
            while taken < len(lines):
                line, taken, last = lines[taken], taken + 1, now
                if line is None:
                    self.duration_s, self.ended = now - (started or start), now
                    self.points.append((now, self.history.acked))
                    return
                if self._take(line) == "startup_complete" and started is None:
                    started = self.started = now
                    faults.start()
            if started is not None:
                self.points.append((now, self.history.acked))
            self.ended = now
            limit = START_S if started is None else silence_s
            if now - last > limit:
                self.problem = f"{TOOL} printed nothing for {limit:g} s: stopped"
                return

    def _take(self, line: str) -> str:
        try:
            event = json.loads(line)
        except json.JSONDecodeError:
            return ""  # a log line that reached stdout
        name = event.get("name", "")
        if name in ("producer_send_success", "producer_send_error"):
            sequence = int(event["value"])
            if not 0 <= sequence < self.history.sent:
                return name
            if name == "producer_send_success":
                self.history.record_ack(sequence, int(event["partition"]), int(event["offset"]))
            else:
                error = str(event.get("exception", "")).rsplit(".", 1)[-1] or "error"
                record = self.history.record_unknown if error in TIMEOUTS else self.history.record_failure
                record(sequence, error)
        elif name == "tool_data":
            self.summary = {key: value for key, value in event.items() if key not in ("name", "timestamp")}
        return name

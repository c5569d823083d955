"""The cluster's own times at a workload's count of topics and partitions (`--cluster-times`, on a cluster kafkabench
started and may break): the time to create the workload's topics until every partition is led and in sync; the time
the cluster takes no metadata change after its KRaft quorum's leader is killed (another controller taking over, or
the only one restarting); and the time a broker takes to restart on that much data until every partition is in sync
again. The topics are created for this alone and deleted after it.

A metadata change is a one-partition topic created and led: timed once on the healthy cluster (the floor every
figure includes) and then every PROBE_EVERY_S after the kill until one succeeds. The quorum's leader is asked of
the cluster with Apache Kafka's own MetadataQuorumCommand.
"""

from __future__ import annotations

import re
import subprocess
import tempfile
import time
import uuid

from kafkabench.admin import KafkaAdmin
from kafkabench.cluster.java import tool_command
from kafkabench.cluster.target import Target
from kafkabench.errors import KafkabenchError

PROBE_EVERY_S = 0.1
PROBE_TIMEOUT_S = 2.0  # one attempt of a metadata change while the quorum has no leader
TOOL_TIMEOUT_S = 60.0


class ClusterTimesFailed(KafkabenchError):
    """The cluster could not be timed: its quorum's leader unknown, or no metadata change within the bound."""


def quorum_leader(target: Target) -> int:
    """The KRaft quorum's leader, as `kafka-metadata-quorum.sh describe --status` says."""
    with tempfile.NamedTemporaryFile("w", suffix=".properties") as config:
        config.write("".join(f"{key}={value}\n" for key, value in target.connection.settings.items()))
        config.flush()
        command = [*tool_command("org.apache.kafka.tools.MetadataQuorumCommand"), "--bootstrap-server",
                   target.bootstrap_servers, "--command-config", config.name, "describe", "--status"]
        try:
            done = subprocess.run(command, capture_output=True, text=True, timeout=TOOL_TIMEOUT_S,
                                  stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired as exc:
            raise ClusterTimesFailed(f"MetadataQuorumCommand did not answer within {TOOL_TIMEOUT_S:g} s") from exc
    found = re.search(r"^LeaderId:\s*(-?\d+)", done.stdout, re.MULTILINE)
    if done.returncode != 0 or found is None or int(found[1]) < 0:
        said = (done.stderr.strip() or done.stdout.strip()).splitlines()[-1:] or ["no output"]
        raise ClusterTimesFailed(f"the KRaft quorum's leader could not be read (MetadataQuorumCommand: "
                                 f"{said[0][:200]})")
    return int(found[1])


def cluster_times(target: Target, topics: list[str], partitions: int, replication_factor: int,
                  topic_config: dict[str, str], timeout_s: float) -> dict:
    """Creation, controller failover and broker restart at this count; the cluster is whole again after it."""
    faults, probe = target.faults, f"kafkabench-metadata-probe-{uuid.uuid4().hex[:8]}"
    figures: dict = {"topics": len(topics), "partitions": len(topics) * partitions}
    with KafkaAdmin(target.connection, timeout_s=timeout_s) as admin:
        try:
            started = time.monotonic()
            admin.create_topics(topics, partitions, replication_factor, topic_config)
            figures["create_s"] = round(time.monotonic() - started, 3)
            figures["metadata_change_s"] = round(_metadata_change(target, f"{probe}-0", timeout_s), 3)
            figures.update(_failover(target, f"{probe}-1", timeout_s))
            broker = faults.broker_ids()[0]
            started = time.monotonic()
            faults.restart(broker)
            faults.wait_healthy(timeout_s + len(topics) * partitions / 100, topics)
            figures["broker_restart"] = {"broker": broker, "in_sync_s": round(time.monotonic() - started, 3)}
        finally:
            faults.bring_back()
            try:
                admin.delete_topics([*topics, f"{probe}-0", f"{probe}-1"])
            except KafkabenchError:
                pass
    return figures


def _failover(target: Target, probe: str, timeout_s: float) -> dict:
    """Kill the quorum's leader; with other controllers, time until the cluster takes a metadata change again, then
    restart it; the only controller is restarted at once and timed until the same."""
    leader = quorum_leader(target)
    alone = len(target.faults.controllers()) == 1
    started = time.monotonic()
    target.faults.kill(leader)
    if alone:
        target.faults.bring_back()
    seconds = time.monotonic() - started + _metadata_change(target, probe, timeout_s)
    if not alone:
        target.faults.bring_back()
    return {"controller_failover": {"killed": leader, "how": "the only controller restarted" if alone else
                                    "another controller took over", "metadata_change_s": round(seconds, 3)}}


def _metadata_change(target: Target, probe: str, timeout_s: float) -> float:
    """Seconds until a one-partition topic is created and led, trying every PROBE_EVERY_S."""
    started, deadline = time.monotonic(), time.monotonic() + timeout_s
    while True:
        try:
            with KafkaAdmin(target.connection, timeout_s=PROBE_TIMEOUT_S) as admin:
                admin.create_topics([probe], 1, 1)
            return time.monotonic() - started
        except KafkabenchError as exc:
            if time.monotonic() >= deadline:
                raise ClusterTimesFailed(f"no metadata change within {timeout_s:g} s after the controller's kill: "
                                         f"{exc}") from exc
            time.sleep(PROBE_EVERY_S)

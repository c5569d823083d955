"""`rolling-upgrade:VERSION`: every node of the embedded cluster restarted in turn on another pinned Kafka release,
on its own data, then the upgrade finalized, as Kafka's upgrade notes do it.

- `check`: the release is one kafkabench pins and newer than what the cluster runs: Kafka does not go back below a
  finalized metadata.version, and kafkabench does not downgrade (one ConfigError line, before the run).
- `upgrade`: the dedicated controllers first, then the brokers (a broker never runs a release its controllers do
  not know), each a graceful stop and a start on the new release's jars, then waited for until every partition of
  the topic has its full ISR again before the next; then every feature upgraded to the release's levels
  (`kafka-features upgrade --release-version MAJOR.MINOR`), metadata.version read before and after.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from kafkabench.cluster.artifacts import packaged_manifest, release
from kafkabench.cluster.faults import Faults
from kafkabench.cluster.features import finalize
from kafkabench.connection import Connection
from kafkabench.errors import ConfigError
from kafkabench.operations.spec import OperationSpec
from kafkabench.operations.steps import restarted


def check(spec: OperationSpec, faults: Faults) -> None:
    """Before the run: a pinned release, newer than every node's."""
    packaged_manifest(spec.version)  # a ConfigError naming the pinned ones
    running = sorted({faults.node_version(node) for node in faults.node_ids()}, key=release)
    if release(spec.version) < release(running[-1]):
        raise ConfigError(f"{spec.label}: the cluster runs Kafka {running[-1]}; Kafka does not go back below a "
                          "finalized metadata.version, and kafkabench upgrades only: start the cluster on the older "
                          "release (--kafka-version) to upgrade from it")
    if running == [spec.version]:
        raise ConfigError(f"{spec.label}: the cluster runs Kafka {spec.version} already: nothing to upgrade; start it "
                          "on an older release (--kafka-version)")


def upgrade(spec: OperationSpec, faults: Faults, connection: str | Connection, topic: str,
            clock: Callable[[], float], heal_timeout_s: float, stopped: Callable[[], bool]) -> tuple[str, list[dict]]:
    """What was done, in words, and a step per node (its release before, when it was stopped, serving again on the new
    one, and the topic whole again), then the finalizing step."""
    brokers = faults.broker_ids()
    nodes = [node for node in faults.controllers() if node not in brokers] + brokers
    steps: list[dict] = []
    for node in nodes:
        if stopped():
            break
        was = faults.node_version(node)
        if was == spec.version:
            continue
        step = {"node": node, "role": "broker" if node in brokers else "controller", "from": was,
                "stop_s": round(clock(), 3)}
        steps.append(step)
        # a controlled shutdown, its leadership handed over first, then its start on the new release
        restarted(step, lambda node=node: faults.restart_on(node, spec.version), faults, topic, clock, heal_timeout_s,
                  f"node {node} restarted on Kafka {spec.version}")
    behind = [node for node in nodes if faults.node_version(node) != spec.version]
    if behind:
        return (f"node(s) {', '.join(str(step['node']) for step in steps)} restarted on Kafka {spec.version}; the run "
                f"ended before node(s) {', '.join(map(str, behind))}: not finalized"), steps
    major_minor = ".".join(spec.version.split(".")[:2])
    step = {"finalize": major_minor, "finalize_s": round(clock(), 3)}
    steps.append(step)
    begun = time.monotonic()
    step["metadata_version_before"], step["metadata_version"] = finalize(
        connection if isinstance(connection, Connection) else Connection(connection), major_minor, heal_timeout_s)
    step["finalized_s"], step["finalize_took_s"] = round(clock(), 3), round(time.monotonic() - begun, 3)
    moved = [s for s in steps if "node" in s]
    return (f"node(s) {', '.join(str(s['node']) for s in moved)} restarted in turn on Kafka {spec.version} (from "
            f"{', '.join(sorted({s['from'] for s in moved}, key=release))}; controllers first), each back and "
            f"{topic} whole before the next; then finalized: metadata.version {step['metadata_version_before']} -> "
            f"{step['metadata_version']}"), steps

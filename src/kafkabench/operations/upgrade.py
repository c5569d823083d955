"""`rolling-upgrade:VERSION[,back]`: every node of the embedded cluster restarted in turn on another pinned Kafka
release, on its own data, then the upgrade finalized, as Kafka's upgrade notes do it; or, with `back`, not finalized
and every node rolled back to the release it ran: the way back Kafka allows until metadata.version is finalized.

- `check`: the release is one kafkabench pins and newer than what the cluster runs: an embedded cluster's
  metadata.version is its release's, and Kafka does not go back below a finalized metadata.version (one ConfigError
  line, before the run, naming `back` as the way to measure a downgrade).
- `upgrade`: the dedicated controllers first, then the brokers (a broker never runs a release its controllers do
  not know), each a graceful stop and a start on the new release's jars, then waited for until every partition of
  the topic has its full ISR again before the next; then every feature upgraded to the release's levels
  (`kafka-features upgrade --release-version MAJOR.MINOR`), metadata.version read before and after. The way back
  goes the other way round: the brokers first, then the controllers.
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
        raise ConfigError(f"{spec.label}: the cluster runs Kafka {running[-1]}, and its metadata.version is that "
                          "release's: Kafka does not go back below it; to measure the way back, start the cluster on "
                          f"Kafka {spec.version} (--kafka-version) and run rolling-upgrade:{running[-1]},back (up, "
                          "not finalized, and back)")
    if running == [spec.version]:
        raise ConfigError(f"{spec.label}: the cluster runs Kafka {spec.version} already: nothing to upgrade; start it "
                          "on an older release (--kafka-version)")


def upgrade(spec: OperationSpec, faults: Faults, connection: str | Connection, topic: str,
            clock: Callable[[], float], heal_timeout_s: float, stopped: Callable[[], bool]) -> tuple[str, list[dict]]:
    """What was done, in words, and a step per node restarted (its release before and after, when it was stopped,
    serving again, and the topic whole again), then the finalizing step, or with `back` the way back instead."""
    brokers = faults.broker_ids()
    controllers = [node for node in faults.controllers() if node not in brokers]
    was = {node: faults.node_version(node) for node in controllers + brokers}
    steps = _roll([(node, spec.version) for node in controllers + brokers if was[node] != spec.version], faults,
                  topic, clock, heal_timeout_s, stopped)  # controllers first: a broker never runs a release they lack
    behind = [node for node in was if faults.node_version(node) != spec.version]
    up = f"node(s) {', '.join(str(step['node']) for step in steps)} restarted in turn on Kafka {spec.version}"
    if behind:
        return f"{up}; the run ended before node(s) {', '.join(map(str, behind))}: not finalized", steps
    origins = f"from {', '.join(sorted(set(was.values()), key=release))}; controllers first"
    if spec.back:  # the brokers first now: controllers on the newer release still know them
        back = _roll([(node, was[node]) for node in brokers + controllers if was[node] != spec.version], faults, topic,
                     clock, heal_timeout_s, stopped)
        ahead = [node for node in was if faults.node_version(node) != was[node]]
        return (f"{up} ({origins}), each back and {topic} whole before the next, not finalized; then back: "
                f"node(s) {', '.join(str(step['node']) for step in back)} on their release again, brokers first"
                + (f"; the run ended before node(s) {', '.join(map(str, ahead))}" if ahead else "")), steps + back
    major_minor = ".".join(spec.version.split(".")[:2])
    step = {"finalize": major_minor, "finalize_s": round(clock(), 3)}
    begun = time.monotonic()
    step["metadata_version_before"], step["metadata_version"] = finalize(
        connection if isinstance(connection, Connection) else Connection(connection), major_minor, heal_timeout_s)
    step["finalized_s"], step["finalize_took_s"] = round(clock(), 3), round(time.monotonic() - begun, 3)
    return (f"{up} ({origins}), each back and {topic} whole before the next; then finalized: metadata.version "
            f"{step['metadata_version_before']} -> {step['metadata_version']}"), [*steps, step]


def _roll(moves: list[tuple[int, str]], faults: Faults, topic: str, clock: Callable[[], float], heal_timeout_s: float,
          stopped: Callable[[], bool]) -> list[dict]:
    """Each node in turn restarted on its release (a controlled shutdown, its leadership handed over first), serving
    and the topic whole again before the next; a step per node restarted, until the run is over."""
    brokers = faults.broker_ids()
    steps: list[dict] = []
    for node, to in moves:
        if stopped():
            break
        step = {"node": node, "role": "broker" if node in brokers else "controller", "from": faults.node_version(node),
                "to": to, "stop_s": round(clock(), 3)}
        steps.append(step)
        restarted(step, lambda node=node, to=to: faults.restart_on(node, to), faults, topic, clock, heal_timeout_s,
                  f"node {node} restarted on Kafka {to}")
    return steps

"""An operation carried out on a cluster, step by step, each step bounded and recorded in the run's seconds.

Restarts (and upgrade.py's restarts on another release) go through the `Faults` seam (an external cluster refuses
them, said before the run starts by `check`); leader elections, settings and reassignments (reassign.py) through the
Admin API, so they work on any cluster.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypeVar

from kafkabench.admin import KafkaAdmin
from kafkabench.cluster.faults import Faults, FaultsUnavailable
from kafkabench.connection import Connection
from kafkabench.errors import ConfigError
from kafkabench.operations import add_broker, reassign, upgrade
from kafkabench.operations.spec import OperationSpec
from kafkabench.operations.steps import restarted
from kafkabench.partition_watch import Downs

ADMIN_TIMEOUT_S = 30.0
SEEN_S = 10.0  # after an election or a setting: how long the brokers' metadata may take to show it
SEEN_POLL_S = 0.1
T = TypeVar("T")


@dataclass
class Performed:
    what: str  # in words: "brokers 1, 2, 3 restarted in turn (controlled shutdown), each back in every ISR"
    steps: list[dict] = field(default_factory=list)  # each step's figures, in the run's seconds
    error: str | None = None  # what went wrong once its steps had begun (the operation is not over: nothing healed)


def check(specs: list[OperationSpec], faults: Faults, bootstrap: str | Connection, topic: str | None = None,
          replication_factor: int = 1) -> None:
    """Before a run: an operation that starts or restarts brokers needs the embedded cluster (one that restarts them,
    more than one broker; an upgrade, a newer pinned release); a reassignment, the brokers it names and a place for
    each partition it moves (on `topic`, or before it is made, a topic of `replication_factor`); else one ConfigError
    line."""
    for spec in specs:
        if spec.kind == "reassign":
            reassign.check(spec, bootstrap, topic, replication_factor)
    processes = [spec for spec in specs if spec.starts_processes]
    if not processes:
        return
    try:
        brokers = faults.broker_ids()
    except FaultsUnavailable:
        does = "starts a broker" if processes[0].kind == "add-broker" else "restarts broker processes"
        raise ConfigError(f"{processes[0].kind} {does}, which needs the embedded cluster (drop --bootstrap-servers to "
                          "let kafkabench start one); elect-leaders, config and reassign work on any cluster") from None
    restarting = [spec for spec in processes if spec.restarts]
    if restarting and len(brokers) < 2:
        raise ConfigError(f"{restarting[0].kind} on a cluster of one broker leaves every partition without a leader "
                          "while it restarts: give the cluster more brokers (--brokers 3)")
    for spec in restarting:
        if spec.kind == "rolling-upgrade":
            upgrade.check(spec, faults)


def perform(spec: OperationSpec, faults: Faults, bootstrap: str | Connection, topic: str, clock: Callable[[], float],
            heal_timeout_s: float, stopped: Callable[[], bool] = lambda: False, down: Downs | None = None
            ) -> Performed:
    """Carry out `spec` on `topic`'s cluster; `clock` gives the run's seconds for the steps. `stopped`: the run has
    ended, and a rolling restart starts no further broker's stop (the one under way is finished). `down`: the
    brokers that cannot serve as leaders though the metadata may still name them (killed, then starting again), kept
    up to date, with when, for the partitions' watch."""
    if spec.kind == "rolling-restart":
        return _rolling_restart(spec, faults, topic, clock, heal_timeout_s, stopped, down or Downs(clock))
    if spec.kind == "config":
        return _config(spec, bootstrap, topic, clock)
    if spec.kind == "reassign":
        return Performed(*reassign.move(spec, bootstrap, topic, clock, heal_timeout_s))
    if spec.kind == "add-broker":
        return Performed(*add_broker.add(spec, faults, bootstrap, topic, clock, heal_timeout_s))
    if spec.kind == "rolling-upgrade":
        return Performed(*upgrade.upgrade(spec, faults, bootstrap, topic, clock, heal_timeout_s, stopped))
    return _elect_leaders(bootstrap, topic, clock)


def _rolling_restart(spec: OperationSpec, faults: Faults, topic: str, clock: Callable[[], float],
                     heal_timeout_s: float, stopped: Callable[[], bool], down: Downs) -> Performed:
    how = "kill -9, no hand-over" if spec.kill else "controlled shutdown"
    performed = Performed("")
    brokers = faults.broker_ids()
    for index, broker in enumerate(brokers):
        if stopped():
            break
        step = {"broker": broker, "stop_s": round(clock(), 3)}
        performed.steps.append(step)

        def restart(broker: int = broker) -> None:
            if spec.kill:  # its partitions keep it as their leader until the controller fences it or it is back
                down.add(broker)
                faults.kill(broker)
            try:
                faults.restart(broker)  # a graceful stop (SIGTERM) of a running broker, then its start on its data
            finally:
                down.discard(broker)

        restarted(step, restart, faults, topic, clock, heal_timeout_s, f"broker {broker} restarted ({how})")
        if spec.pause_s and index < len(brokers) - 1:
            time.sleep(spec.pause_s)
    done = [step["broker"] for step in performed.steps]
    performed.what = (f"broker(s) {', '.join(map(str, done))} restarted in turn ({how}), each back in every ISR of "
                      f"{topic} before the next" + ("" if len(done) == len(brokers) else
                                                    f"; the run ended before broker(s) "
                                                    f"{', '.join(str(b) for b in brokers if b not in done)}"))
    return performed


def _elect_leaders(bootstrap: str | Connection, topic: str, clock: Callable[[], float]) -> Performed:
    """The election, then the metadata read until it shows every partition on its preferred leader, within
    SEEN_S: the brokers learn the new leaders from the controller a moment after the election's answer."""
    with KafkaAdmin(bootstrap, timeout_s=ADMIN_TIMEOUT_S) as admin:
        skewed = _skewed(admin, topic)
        step = {"skewed": skewed, "elect_s": round(clock(), 3)}
        if skewed:
            admin.elect_preferred_leaders(topic, skewed)
        step["elected_s"] = round(clock(), 3)
        still = _until_seen(lambda: _skewed(admin, topic), lambda skewed: not skewed)
    step["still_skewed"], step["seen_s"] = still, None if still else round(clock(), 3)
    what = (f"preferred leaders elected for {len(skewed)} partition(s) of {topic} ({', '.join(map(str, skewed))})"
            if skewed else f"every partition of {topic} was on its preferred leader: nothing to elect")
    if still:
        what += f"; still on another leader {SEEN_S:g} s after it: {', '.join(map(str, still))}"
    return Performed(what, [step])


def _until_seen(read: Callable[[], T], seen: Callable[[T], bool]) -> T:
    """`read()` again every SEEN_POLL_S until `seen` of it, or SEEN_S passed: its last answer."""
    deadline = time.monotonic() + SEEN_S
    while not seen(answer := read()) and time.monotonic() < deadline:
        time.sleep(SEEN_POLL_S)
    return answer


def _skewed(admin: KafkaAdmin, topic: str) -> list[int]:
    """The topic's partitions whose leader is not their preferred one (the first replica)."""
    return [p.partition for p in admin.describe_topic(topic).partitions if p.replicas and p.leader != p.replicas[0]]


def _read_back(admin: KafkaAdmin, topic: str, settings: dict[str, str]) -> dict[str, str | None]:
    found = admin.topic_configs(topic)
    return {key: found.get(key) for key in settings}


def _config(spec: OperationSpec, bootstrap: str | Connection, topic: str, clock: Callable[[], float]) -> Performed:
    """The settings made live, then the topic's read back (the brokers' default is not: the Admin API answers a
    broker's settings per broker)."""
    on_topic, on_brokers = spec.settings("topic"), spec.settings("brokers")
    step: dict = {"topic": on_topic, "brokers": on_brokers, "set_s": round(clock(), 3)}
    with KafkaAdmin(bootstrap, timeout_s=ADMIN_TIMEOUT_S) as admin:
        if on_topic:
            admin.set_topic_config(topic, on_topic)
        if on_brokers:
            admin.set_broker_default_config(on_brokers)
        step["done_s"] = round(clock(), 3)
        if on_topic:  # any broker answers, from metadata that follows the controller's commit a moment later
            step["topic_read_back"] = _until_seen(lambda: _read_back(admin, topic, on_topic),
                                                  lambda read: read == on_topic)
    said = [f"{topic}'s {', '.join(f'{k}={v}' for k, v in on_topic.items())}"] if on_topic else []
    if on_brokers:
        said.append(f"the brokers' {', '.join(f'{k}={v}' for k, v in on_brokers.items())} (cluster-wide default)")
    differ = {key: value for key, value in step.get("topic_read_back", {}).items() if value != on_topic[key]}
    return Performed("set live: " + "; ".join(said) + (f"; read back otherwise: {differ}" if differ else ""), [step])

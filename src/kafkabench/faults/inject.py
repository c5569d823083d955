"""A fault fired through the `Faults` seam: whom it hits (looked up when it fires), what it does, how it heals.

`aim` resolves the spec's target and peers on the cluster as it is at that moment: the leader of the lab's partition,
a follower in its ISR, the first running controller, or a node by id; a partition's peer groups (followers: the
partition's other replicas; controllers: the quorum's voters; brokers: every other broker; clients; all) and a
delay's `to`. `inject` puts the fault in place and returns what it did, in words, and its heal: a killed node is
restarted, a paused one resumed, a network impairment removed; a clean restart heals by itself.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from kafkabench.admin import KafkaAdmin
from kafkabench.cluster.faults import CLIENTS, Faults
from kafkabench.connection import Connection
from kafkabench.errors import KafkabenchError
from kafkabench.faults.spec import FaultSpec

VICTIM_LOOKUP_S = 30.0  # the ISR asked right after a heal, on a loaded machine: an answer usually takes ms


@dataclass(frozen=True)
class Aim:
    """Whom a fault hits, and (network faults) whom it cuts it from or delays it towards."""

    victim: int
    peers: tuple[int, ...] = ()  # node ids, CLIENTS for the clients
    to: int | None = None


@dataclass
class Injected:
    what: str  # e.g. "broker 1 cut from broker 2, broker 3, controller 101 both ways (dropped)"
    heal: Callable[[], None] = field(default=lambda: None)


def check(specs: list[FaultSpec], faults: Faults) -> None:
    """Before a run: every node a fault names exists, and network faults can be had on this cluster; else one
    KafkabenchError line naming what is wrong."""
    if not specs:
        return
    if any(spec.is_network for spec in specs) and (reason := faults.network_unavailable()):
        raise KafkabenchError(reason)
    known = faults.node_ids()
    for spec in specs:
        for node in spec.node_ids:
            if node not in known:
                raise KafkabenchError(f"fault {spec.kind}: no node {node} in this cluster; its nodes are "
                                      f"{', '.join(map(str, known))}")


def aim(spec: FaultSpec, faults: Faults, topic: str, bootstrap: str | Connection,
        coordinator: Callable[[], int] | None = None) -> Aim:
    """`topic`: the partition whose leader and followers the roles name; `coordinator`: finds the coordinator's
    broker (None: the run has no transactions or group to have one)."""
    roles = _Roles(faults, topic, bootstrap, coordinator)
    victim = roles.node(spec.role, spec.action)
    if spec.action == "partition":
        peers = sorted({peer for group in spec.peer_groups for peer in roles.group(group, victim)})
        if not peers:
            raise KafkabenchError(f"{spec.kind} from {'+'.join(spec.peer_groups)}: node {victim} has no such peers "
                                  "here; the partition would cut nothing")
        return Aim(victim, tuple(peers))
    if spec.action == "delay" and (to := spec.option("to")) is not None:
        target = CLIENTS if to == "clients" else roles.node(to, "delay towards", exclude=victim)
        return Aim(victim, to=target)
    return Aim(victim)


def inject(spec: FaultSpec, faults: Faults, aim: Aim) -> Injected:
    node = _name(faults, aim.victim)
    if spec.action == "kill":
        faults.kill(aim.victim)
        return Injected(f"{node} killed (kill -9)", lambda: faults.restart(aim.victim))
    if spec.action == "pause":
        faults.pause(aim.victim)
        return Injected(f"{node} paused (SIGSTOP)", lambda: faults.resume(aim.victim))
    if spec.action == "restart":
        faults.restart(aim.victim)
        return Injected(f"{node} restarted cleanly")
    if spec.action == "partition":
        impairment = faults.cut(aim.victim, list(aim.peers), direction=spec.option("oneway") or "both",
                                reset=spec.option("reset") is not None)
        peers = ", ".join(_name(faults, peer) for peer in aim.peers)
        way = {"in": "packets to it only", "out": "packets from it only"}.get(spec.option("oneway") or "", "both ways")
        what = f"{node} cut from {peers}, {way} ({'refused with a TCP reset' if spec.option('reset') is not None else 'dropped'})"
    elif spec.action == "delay":
        impairment = faults.delay(aim.victim, spec.number("ms"), spec.number("jitter", 0.0), to=aim.to)
        jitter = f" ± {spec.number('jitter'):g}" if spec.number("jitter") else ""
        where = f"on its packets to {_name(faults, aim.to)}" if aim.to is not None else "each way on all its links"
        what = f"{node} delayed {spec.number('ms'):g}{jitter} ms {where}"
    elif spec.action == "loss":
        impairment = faults.lose(aim.victim, spec.number("percent"))
        what = f"{node} losing {spec.number('percent'):g} % of its packets both ways"
    else:
        impairment = faults.limit(aim.victim, spec.number("mbit"))
        what = f"{node} limited to {spec.number('mbit'):g} Mbit/s each way"
    return Injected(what, lambda: faults.heal(impairment))


def _name(faults: Faults, node: int) -> str:
    if node == CLIENTS:
        return "the clients"
    return f"broker {node}" if node in faults.broker_ids() else f"controller {node}"


class _Roles:
    """The cluster's nodes by role at the moment a fault fires; the partition's replicas asked once."""

    def __init__(self, faults: Faults, topic: str, bootstrap: str | Connection,
                 coordinator: Callable[[], int] | None = None) -> None:
        self.faults, self.topic, self.bootstrap, self.coordinator = faults, topic, bootstrap, coordinator
        self._replicas: tuple[list[int], list[int]] | None = None

    def node(self, role: str, action: str, exclude: int | None = None) -> int:
        if role.isdigit():
            return int(role)
        if role == "coordinator":
            if self.coordinator is None:
                raise KafkabenchError(f"no coordinator to {action}: the run has neither transactions nor consumers")
            return self.coordinator()
        if role == "controller":
            return next(c for c in self.faults.controllers() if c != exclude)
        leader = self.faults.leader_of(self.topic, 0)
        if leader is None:
            raise KafkabenchError(f"{self.topic}[0] has no leader to {action}")
        if role == "leader":
            return leader
        followers = [broker for broker in self.isr() if broker not in (leader, exclude)]
        if not followers:
            raise KafkabenchError(f"{self.topic}[0] has no in-sync follower to {action} (ISR {self.isr()})")
        return followers[0]

    def group(self, group: str, victim: int) -> list[int]:
        nodes = self.faults.node_ids()
        controllers = self.faults.controllers()
        members = {
            "followers": [replica for replica in self.replicas() if replica != victim],
            "controllers": [c for c in controllers if c != victim],
            "brokers": [n for n in self.faults.broker_ids() if n != victim],
            "clients": [CLIENTS],
            "all": [*(n for n in nodes if n != victim), CLIENTS],
        }
        return members[group]

    def replicas(self) -> list[int]:
        return self._describe()[0]

    def isr(self) -> list[int]:
        return self._describe()[1]

    def _describe(self) -> tuple[list[int], list[int]]:
        if self._replicas is None:
            with KafkaAdmin(self.bootstrap, timeout_s=VICTIM_LOOKUP_S) as admin:
                partition = admin.describe_topic(self.topic).partitions[0]
            self._replicas = (list(partition.replicas), list(partition.isr))
        return self._replicas

"""Fault injection on the cluster a run targets: find leaders, kill, pause, resume and restart brokers, and (on an
isolated network, see `cluster.network`) cut, delay, thin and lose the packets of a node's links.

Labs depend on the `Faults` protocol, never on `EmbeddedCluster`, so a lab written against it runs
unchanged on any cluster that can be broken on purpose, and fails with one clear line on one that
cannot (an external cluster: kafkabench does not own its processes).
"""

from __future__ import annotations

from typing import NoReturn, Protocol, runtime_checkable

from kafkabench.admin import KafkaAdmin
from kafkabench.cluster.embedded import EmbeddedCluster
from kafkabench.cluster.network.impairments import Impairment, Impairments
from kafkabench.cluster.status import BrokerStatus
from kafkabench.connection import Connection
from kafkabench.errors import KafkaAdminError, KafkabenchError, WaitTimeout
from kafkabench.waiting import wait_until

# a hung broker must not stall one health poll for long: the poll's own admin calls are short
PROBE_TIMEOUT_S = 2.0
POLL_INTERVAL_S = 0.2


CLIENTS = 0  # among a network fault's peers: the clients (the root namespace), beside node ids


class FaultsUnavailable(KafkabenchError):
    """Fault injection was asked of a cluster whose broker processes kafkabench does not own, or a network fault of
    one that is not on a network of its own."""


@runtime_checkable
class Faults(Protocol):
    """What a lab may do to the brokers of the cluster it runs against."""

    def leader_of(self, topic: str, partition: int = 0) -> int | None:
        """The id of the partition's leader now, None while it has none."""
        ...

    def kill(self, broker_id: int) -> None:
        """kill -9: a crash, with no controlled leadership hand-over."""
        ...

    def pause(self, broker_id: int) -> None:
        """SIGSTOP: the broker keeps its sockets open but answers nothing, like a long GC pause."""
        ...

    def resume(self, broker_id: int) -> None:
        """SIGCONT after `pause`."""
        ...

    def restart(self, *broker_ids: int) -> None:
        """A clean restart on the same data, the brokers started together; returns once they all serve again."""
        ...

    def restart_on(self, node_id: int, version: str) -> None:
        """A clean restart of one node on another pinned Kafka release, same data; returns once it serves again."""
        ...

    def node_version(self, node_id: int) -> str:
        """The Kafka release the node runs."""
        ...

    def add_broker(self) -> int:
        """A new broker joins the cluster; its id, once it serves."""
        ...

    def bring_back(self) -> list[str]:
        """Resume every paused node and restart every dead one (together); what was done, e.g. "restarted broker 2"."""
        ...

    def wait_healthy(self, timeout_s: float, topics: list[str] | None = None) -> None:
        """Every broker answers and every partition of `topics` (all topics if None) has a leader and
        its full ISR; raises WaitTimeout naming what is still wrong."""
        ...

    def broker_pids(self) -> dict[int, int]:
        """Live broker id -> pid, so a lab can account for the brokers' CPU; a paused broker is live."""
        ...

    def controllers(self) -> list[int]:
        """The KRaft controllers' node ids, running ones first: the dedicated controllers, else the combined nodes."""
        ...

    def node_ids(self) -> list[int]:
        """Every node's id: the brokers', then the dedicated controllers'."""
        ...

    def broker_ids(self) -> list[int]:
        ...

    def network_unavailable(self) -> str | None:
        """Why network faults cannot be had here (one line saying how to get them), None when they can."""
        ...

    def cut(self, node_id: int, peers: list[int], *, direction: str = "both", reset: bool = False) -> Impairment:
        """The node's packets to and from `peers` (node ids, CLIENTS for the clients) dropped, or refused with a TCP
        reset; `direction` in: only those to the node, out: only those from it."""
        ...

    def delay(self, node_id: int, delay_ms: float, jitter_ms: float = 0, to: int | None = None) -> Impairment:
        """Every packet the node sends and receives held `delay_ms` ± `jitter_ms`; with `to` (a node id, CLIENTS)
        only those it sends there."""
        ...

    def lose(self, node_id: int, percent: float) -> Impairment:
        ...

    def limit(self, node_id: int, mbit: float) -> Impairment:
        ...

    def heal(self, impairment: Impairment) -> None:
        ...


class EmbeddedFaults:
    """Faults on an embedded cluster kafkabench started (now or earlier, see `EmbeddedCluster.attach`)."""

    def __init__(self, cluster: EmbeddedCluster) -> None:
        self.cluster = cluster
        self._impairments = Impairments(cluster.network) if cluster.network is not None else None

    def leader_of(self, topic: str, partition: int = 0) -> int | None:
        return self.cluster.leader_of(topic, partition)

    def kill(self, broker_id: int) -> None:
        self.cluster.kill_broker(broker_id)

    def pause(self, broker_id: int) -> None:
        self.cluster.pause_broker(broker_id)

    def resume(self, broker_id: int) -> None:
        self.cluster.resume_broker(broker_id)

    def restart(self, *broker_ids: int) -> None:
        self.cluster.restart_nodes(list(broker_ids))

    def restart_on(self, node_id: int, version: str) -> None:
        self.cluster.restart_on(node_id, version)

    def node_version(self, node_id: int) -> str:
        return self.cluster.node_version(node_id)

    def add_broker(self) -> int:
        return self.cluster.add_broker()

    def broker_pids(self) -> dict[int, int]:
        return {b.id: b.pid for b in self.cluster.status().brokers if b.alive and b.pid is not None}

    def controllers(self) -> list[int]:
        status = self.cluster.status()
        nodes = status.controllers or [b for b in status.brokers if "controller" in b.roles]
        return [node.id for node in sorted(nodes, key=lambda node: (node.state != "running", node.id))]

    def node_ids(self) -> list[int]:
        return self.cluster.node_ids()

    def broker_ids(self) -> list[int]:
        return self.cluster.broker_ids()

    def network_unavailable(self) -> str | None:
        if self._impairments is None:
            return ("network faults need a cluster on a network of its own: start one with `kafkabench cluster up "
                    "--network isolated` (as root), or stop the running one and let the lab start it")
        return None

    def cut(self, node_id: int, peers: list[int], *, direction: str = "both", reset: bool = False) -> Impairment:
        addresses = [self._address(peer) for peer in peers]
        return self._network().cut(self._place(node_id), addresses, direction=direction, reset=reset)

    def delay(self, node_id: int, delay_ms: float, jitter_ms: float = 0, to: int | None = None) -> Impairment:
        return self._network().delay(self._place(node_id), delay_ms, jitter_ms,
                                     to=None if to is None else 0 if to == CLIENTS else self._place(to))

    def lose(self, node_id: int, percent: float) -> Impairment:
        return self._network().lose(self._place(node_id), percent)

    def limit(self, node_id: int, mbit: float) -> Impairment:
        return self._network().limit(self._place(node_id), mbit)

    def heal(self, impairment: Impairment) -> None:
        self._network().heal(impairment)

    def _network(self) -> Impairments:
        if self._impairments is None:
            raise FaultsUnavailable(self.network_unavailable())
        return self._impairments

    def _place(self, node_id: int) -> int:
        """The node's place on the network (1..N, in the order of the state file)."""
        state = self.cluster.state
        return state.nodes.index(state.node(node_id)) + 1

    def _address(self, peer: int) -> str:
        return self._network().network.gateway if peer == CLIENTS else self.cluster.state.node(peer).host

    def bring_back(self) -> list[str]:
        status = self.cluster.status()
        nodes = [*status.brokers, *status.controllers]
        done = [f"healed {what}" for what in self._impairments.heal_all()] if self._impairments is not None else []
        for node in nodes:
            if node.state == "paused":
                self.cluster.resume_broker(node.id)
                done.append(f"resumed {_node_name(node)}")
        dead = [node for node in nodes if node.state == "dead"]
        if dead:
            self.cluster.restart_nodes([node.id for node in dead])
            done += [f"restarted {_node_name(node)}" for node in dead]
        return done

    def wait_healthy(self, timeout_s: float, topics: list[str] | None = None) -> None:
        """Polls until nothing is wrong. The last poll's findings make the timeout message, so a lab
        that gives up can say which broker or partition kept it waiting."""
        problems: list[str] = []

        def healthy() -> bool:
            problems[:] = self._broker_problems() + self._partition_problems(topics)
            return not problems

        try:
            wait_until(healthy, timeout_s=timeout_s, what="a healthy cluster", interval_s=POLL_INTERVAL_S)
        except WaitTimeout:
            raise WaitTimeout(
                f"timed out after {timeout_s:g} s waiting for a healthy cluster: {'; '.join(problems)}; "
                f"restart or resume the brokers named, or see their logs in {self.cluster.directory}"
            ) from None

    def _broker_problems(self) -> list[str]:
        """A node counts as answering once its own metadata lists every running node, itself included: a node
        that is up but still fenced by the controller is left out of that list."""
        status = self.cluster.status()
        running = {b.id for b in status.brokers if b.state == "running"}
        connection = self.cluster.connection
        return [problem for b in status.brokers if (problem := _broker_problem(connection, b, running))] \
            + [f"controller {c.id} is {c.state}" for c in status.controllers if c.state != "running"]

    def _partition_problems(self, topics: list[str] | None) -> list[str]:
        try:
            live = self.cluster.connection.at(self.cluster.live_bootstrap_servers())
            with KafkaAdmin(live, timeout_s=PROBE_TIMEOUT_S) as admin:
                names = topics if topics is not None else admin.topic_names()
                return [problem for name in names for problem in _topic_problems(admin, name)]
        except KafkaAdminError as exc:
            return [str(exc)]


def _node_name(node: BrokerStatus) -> str:
    return f"{'controller' if node.roles == 'controller' else 'broker'} {node.id}"


def _broker_problem(connection: Connection, broker: BrokerStatus, running: set[int]) -> str | None:
    if broker.state != "running":
        return f"broker {broker.id} is {broker.state}"
    try:
        with KafkaAdmin(connection.at(f"{broker.host}:{broker.port}"), timeout_s=PROBE_TIMEOUT_S) as direct:
            listed = set(direct.brokers(timeout_s=PROBE_TIMEOUT_S))
    except KafkaAdminError:
        return f"broker {broker.id} does not answer"
    missing = running - listed
    return f"broker {broker.id} does not list broker(s) {_ids(missing)} as live" if missing else None


def _topic_problems(admin: KafkaAdmin, topic: str) -> list[str]:
    try:
        info = admin.describe_topic(topic)
    except KafkaAdminError as exc:
        return [str(exc)]
    problems = []
    for p in info.partitions:
        if p.leader is None:
            problems.append(f"{topic}[{p.partition}] has no leader")
        elif set(p.isr) != set(p.replicas):
            problems.append(f"{topic}[{p.partition}] is under-replicated (isr {_ids(p.isr)} of replicas {_ids(p.replicas)})")
    return problems


def _ids(ids: set[int] | tuple[int, ...]) -> str:
    return ",".join(str(i) for i in sorted(ids))


class RefusedFaults:
    """Faults on a cluster kafkabench did not start: every call refuses with the same line, so a lab
    fails at its first fault, before measuring anything, and tells the user how to get a cluster it may break."""

    def __init__(self, bootstrap_servers: str) -> None:
        self.bootstrap_servers = bootstrap_servers

    def _refuse(self) -> NoReturn:
        raise FaultsUnavailable(self.network_unavailable())

    def leader_of(self, topic: str, partition: int = 0) -> int | None:
        self._refuse()

    def kill(self, broker_id: int) -> None:
        self._refuse()

    def pause(self, broker_id: int) -> None:
        self._refuse()

    def resume(self, broker_id: int) -> None:
        self._refuse()

    def restart(self, *broker_ids: int) -> None:
        self._refuse()

    def restart_on(self, node_id: int, version: str) -> None:
        self._refuse()

    def node_version(self, node_id: int) -> str:
        self._refuse()

    def add_broker(self) -> int:
        self._refuse()

    def bring_back(self) -> list[str]:
        self._refuse()

    def wait_healthy(self, timeout_s: float, topics: list[str] | None = None) -> None:
        self._refuse()

    def broker_pids(self) -> dict[int, int]:
        self._refuse()

    def controllers(self) -> list[int]:
        self._refuse()

    def node_ids(self) -> list[int]:
        self._refuse()

    def broker_ids(self) -> list[int]:
        self._refuse()

    def network_unavailable(self) -> str | None:
        return (f"fault injection needs the embedded cluster: {self.bootstrap_servers} was not started by kafkabench "
                "(drop --bootstrap-servers to let kafkabench start one)")

    def cut(self, node_id: int, peers: list[int], *, direction: str = "both", reset: bool = False) -> Impairment:
        self._refuse()

    def delay(self, node_id: int, delay_ms: float, jitter_ms: float = 0, to: int | None = None) -> Impairment:
        self._refuse()

    def lose(self, node_id: int, percent: float) -> Impairment:
        self._refuse()

    def limit(self, node_id: int, mbit: float) -> Impairment:
        self._refuse()

    def heal(self, impairment: Impairment) -> None:
        self._refuse()


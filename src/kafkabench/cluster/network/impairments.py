"""What a network fault does to one node's links on an isolated network, and its undoing.

Every rule lives in the node's own namespace, so removing the network removes them too, and the root namespace (the
machine's own firewall) is never touched:

- a partition is an nftables table dropping (or refusing with a TCP reset) the packets between the node and the
  addresses cut off, in one direction or both;
- loss is an nftables table dropping a random share of the node's packets (`numgen`), both ways; segmentation and
  receive offloads are turned off on the network's links meanwhile, so one dropped packet is one wire-sized packet,
  not a merged 64 KB one;
- a bandwidth limit is a token bucket (`tc tbf`) on both ends of the node's veth: its sending and its receiving;
- a delay is an iptables NFQUEUE rule in the INPUT hook of each receiving side, and a delay helper there holding the
  packets (`delayer`; this kernel has no netem). Packets towards the clients are delayed in the root namespace's
  INPUT hook, by a rule that names the network's bridge and is marked with the network's name.

Each impairment is one table or qdisc named after it, so several stack and each heals alone; `heal_all` removes
whatever a network's nodes carry (also what a killed kafkabench left behind on a cluster that still runs).
"""

from __future__ import annotations

import itertools
import json
import select
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass

from kafkabench.cluster.network.bridge import IsolatedNetwork, remove_root_rules, root_rule_comment, stop_helpers
from kafkabench.cluster.network.routes import run
from kafkabench.errors import ClusterError
from kafkabench.processes import started

TABLE_PREFIX = "kafkabench_"
DIRECTIONS = ("both", "in", "out")  # in: packets to the node are cut; out: packets from it
OFFLOADS = ("tso", "gso", "gro")
HELPER_READY_S = 15.0
_numbers = itertools.count(1)


@dataclass(frozen=True)
class DelayQueue:
    """Where packets are held for a delay: the receiving node (None: the root namespace), its iptables rule, and the
    helper holding them."""

    receiver: int | None
    rule: tuple[str, ...]
    helper_pid: int


@dataclass(frozen=True)
class Impairment:
    """One impairment in place: the node's place on the network, and how it is named there."""

    node: int
    table: str | None = None  # the nftables table (inet family) in the node's namespace
    shaped: bool = False  # a tbf qdisc on both ends of the node's veth
    offloads_off: bool = False
    queues: tuple[DelayQueue, ...] = ()


class Impairments:
    """Impair and heal the links of one isolated network's nodes (by their place on the network, 1..N)."""

    def __init__(self, network: IsolatedNetwork) -> None:
        self.network = network
        self.active: list[Impairment] = []

    def cut(self, node: int, addresses: list[str], *, direction: str = "both", reset: bool = False) -> Impairment:
        """Packets between `node` and `addresses` dropped (`reset`: refused with a TCP reset, so a connection fails at
        once instead of timing out); `direction` in: only those to the node, out: only those from it."""
        if direction not in DIRECTIONS:
            raise ClusterError(f"direction {direction!r}: must be one of {', '.join(DIRECTIONS)}")
        own = self.network.address(node)
        if not addresses or set(addresses) <= {own}:
            raise ClusterError(f"a partition of node {node} from {', '.join(addresses) or 'nothing'} cuts nothing")
        peers = ", ".join(sorted(set(addresses) - {own}))
        verdicts = ["meta l4proto tcp reject with tcp reset", "drop"] if reset else ["drop"]
        chains = []
        if direction in ("both", "in"):
            # a reset answering the node's own refused connect comes back through loopback: it must pass
            chains.append(_chain("input", ["iif lo accept"] + [f"ip saddr {{ {peers} }} {verdict}" for verdict in verdicts]))
        if direction in ("both", "out"):
            # the resets the input chain answers with leave through the output hook: they must pass
            resets = [f"ip daddr {{ {peers} }} tcp flags & rst == rst accept"] if reset and direction == "both" else []
            chains.append(_chain("output", resets + [f"ip daddr {{ {peers} }} {verdict}" for verdict in verdicts]))
        return self._table(node, chains)

    def lose(self, node: int, percent: float) -> Impairment:
        """`percent` of the packets to and from `node` dropped at random (to 0.01 %)."""
        if not 0 < percent < 100:
            raise ClusterError(f"loss of {percent:g} %: must be above 0 and below 100")
        self._offloads(False)
        rule = f"numgen random mod 10000 < {round(percent * 100)} drop"
        return self._table(node, [_chain("input", [rule]), _chain("output", [rule])], offloads_off=True)

    def limit(self, node: int, mbit: float) -> Impairment:
        """`node` sends and receives at most `mbit` megabits/s each way."""
        if not 0 < mbit <= 100_000:
            raise ClusterError(f"bandwidth of {mbit:g} Mbit/s: must be above 0 and at most 100000")
        if any(impairment.node == node and impairment.shaped for impairment in self.active):
            raise ClusterError(f"node {node} already has a bandwidth limit; heal it first")
        rate_bits = int(mbit * 1_000_000)
        burst = max(rate_bits // 8 // 100, 16 * 1024)  # 10 ms of the rate, and at least a few full packets
        for device, namespace in (("eth0", self.network.namespace(node)), (self.network.veth(node), None)):
            run(["tc", "qdisc", "replace", "dev", device, "root", "tbf", "rate", f"{rate_bits}bit",
                 "burst", str(burst), "latency", "100ms"], namespace=namespace)
        impairment = Impairment(node, shaped=True)
        self.active.append(impairment)
        return impairment

    def delay(self, node: int, delay_ms: float, jitter_ms: float = 0, to: int | None = None) -> Impairment:
        """Every packet `node` sends and receives held `delay_ms` (± a uniform `jitter_ms`), so a round trip over
        any of its links takes 2 x `delay_ms` more; with `to` (a node, 0: the clients) only the packets it sends
        there, one way."""
        if not 0 < delay_ms <= 10_000 or not 0 <= jitter_ms <= delay_ms:
            raise ClusterError(f"delay {delay_ms:g} ms ± {jitter_ms:g} ms: the delay must be above 0 and at most "
                               "10000 ms, the jitter from 0 to the delay")
        own = self.network.address(node)
        if to is not None:
            if to == node:
                raise ClusterError(f"a delay from node {node} to itself delays nothing")
            receivers = [(to or None, own)]
        else:
            others = [n for n in range(1, self.network.nodes + 1) if n != node]
            receivers = [(node, str(self.network.subnet)), *((other, own) for other in others), (None, own)]
        number = next(_numbers)
        queues = []
        try:
            for receiver, source in receivers:
                queues.append(self._queue(receiver, source, number, delay_ms, jitter_ms))
        except BaseException:
            self.heal(Impairment(node, queues=tuple(queues)))
            raise
        impairment = Impairment(node, queues=tuple(queues))
        self.active.append(impairment)
        return impairment

    def _queue(self, receiver: int | None, source: str, number: int, delay_ms: float, jitter_ms: float) -> DelayQueue:
        """Packets from `source` into `receiver` (None: the root namespace, from this network's bridge only) handed to
        a delay helper of their own there."""
        queue = (self.network.subnet.network_address.packed[2] << 8) + number % 256  # one per network in the root
        namespace = self.network.namespace(receiver) if receiver else None
        helper = subprocess.Popen([*(self.network.exec_prefix(receiver) if receiver else []), sys.executable, "-m",
                                   "kafkabench.cluster.network.delayer", str(queue), str(delay_ms), str(jitter_ms),
                                   str(self.network.record)],
                                  stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                  start_new_session=True)
        self.network.add_helper(helper.pid, started(helper.pid))
        ready, _, _ = select.select([helper.stdout], [], [], HELPER_READY_S)
        if not ready or helper.stdout.readline().strip() != "ready":
            helper.kill()
            problem = (helper.stderr.read().strip().splitlines() or ["no answer"])[-1] if helper.poll() is not None \
                else f"not ready within {HELPER_READY_S:g} s"
            raise ClusterError(f"the delay helper for queue {queue} did not start: {problem}")
        # from the bridge (root) or the veth (a node): a node's packets to itself, through its loopback, stay prompt
        rule = ("INPUT", "-s", source, "-i", self.network.name if receiver is None else "eth0",
                "-m", "comment", "--comment", root_rule_comment(self.network.name),
                "-j", "NFQUEUE", "--queue-num", str(queue), "--queue-bypass")
        run(["iptables", "-w", "5", "-I", *rule], namespace)
        return DelayQueue(receiver, rule, helper.pid)

    def heal(self, impairment: Impairment) -> None:
        if impairment.table is not None:
            _quietly(["nft", "delete", "table", "inet", impairment.table], self.network.namespace(impairment.node))
        if impairment.shaped:
            for device, namespace in (("eth0", self.network.namespace(impairment.node)),
                                      (self.network.veth(impairment.node), None)):
                _quietly(["tc", "qdisc", "del", "dev", device, "root"], namespace)
        for queue in impairment.queues:  # the rule first: no packet may be queued with no helper to let it go
            _quietly(["iptables", "-w", "5", "-D", *queue.rule],
                     self.network.namespace(queue.receiver) if queue.receiver else None)
            stop_helpers([process for process in self.network.helpers() if process.pid == queue.helper_pid])
        if impairment in self.active:
            self.active.remove(impairment)
        if impairment.offloads_off and not any(other.offloads_off for other in self.active):
            self._offloads(True)

    def heal_all(self) -> list[str]:
        """Remove every impairment any node of the network carries, ours or another process's; what was healed."""
        healed = []
        for node in range(1, self.network.nodes + 1):
            namespace = self.network.namespace(node)
            for table in _tables(namespace):
                _quietly(["nft", "delete", "table", "inet", table], namespace)
                healed.append(f"node {node}: nftables table {table}")
            for device, where in (("eth0", namespace), (self.network.veth(node), None)):
                if any(qdisc.get("kind") == "tbf" for qdisc in _qdiscs(device, where)):
                    _quietly(["tc", "qdisc", "del", "dev", device, "root"], where)
                    healed.append(f"node {node}: bandwidth limit on {device}")
            healed += [f"node {node}: delay rule {rule}" for rule in _delay_rules(namespace)]
            for rule in _delay_rules(namespace):
                _quietly(["iptables", "-w", "5", "-D", *shlex.split(rule)[1:]], namespace)
        remove_root_rules(self.network.name)
        helpers = self.network.helpers()
        stop_helpers(helpers)
        healed += [f"delay helper {helper.pid}" for helper in helpers]
        self.active.clear()
        if shutil.which("ethtool"):  # without it no loss fault could have turned them off
            self._offloads(True)
        return healed

    # ---- helpers ------------------------------------------------------------------------------------------

    def _table(self, node: int, chains: list[str], offloads_off: bool = False) -> Impairment:
        table = f"{TABLE_PREFIX}{next(_numbers)}"
        run(["nft", "-f", "-"], self.network.namespace(node), stdin=f"table inet {table} {{\n{''.join(chains)}}}\n")
        impairment = Impairment(node, table=table, offloads_off=offloads_off)
        self.active.append(impairment)
        return impairment

    def _offloads(self, on: bool) -> None:
        """Segmentation and receive offloads on every link of the network (both ends of each veth)."""
        state = "on" if on else "off"
        settings = [word for offload in OFFLOADS for word in (offload, state)]
        for node in range(1, self.network.nodes + 1):
            run(["ethtool", "-K", "eth0", *settings], self.network.namespace(node))
            run(["ethtool", "-K", self.network.veth(node), *settings])


def _chain(hook: str, rules: list[str]) -> str:
    body = "".join(f"    {rule}\n" for rule in rules)
    return f"  chain {hook} {{\n    type filter hook {hook} priority filter; policy accept;\n{body}  }}\n"


def _tables(namespace: str) -> list[str]:
    """The kafkabench tables in `namespace`."""
    try:
        listed = json.loads(run(["nft", "-j", "list", "tables", "inet"], namespace) or "{}")
    except ClusterError:
        return []
    return [entry["table"]["name"] for entry in listed.get("nftables", [])
            if "table" in entry and entry["table"]["name"].startswith(TABLE_PREFIX)]


def _delay_rules(namespace: str) -> list[str]:
    """The INPUT rules that hand packets to a delay helper in `namespace`, as `iptables -S` prints them."""
    try:
        listed = run(["iptables", "-w", "5", "-S", "INPUT"], namespace)
    except ClusterError:
        return []
    return [line for line in listed.splitlines() if line.startswith("-A INPUT") and "NFQUEUE" in line]


def _qdiscs(device: str, namespace: str | None) -> list[dict]:
    """`tc -j qdisc show dev DEVICE`, parsed; nothing when the device is gone."""
    try:
        output = run(["tc", "-j", "qdisc", "show", "dev", device], namespace)
    except ClusterError:
        return []
    return json.loads(output) if output.strip() else []


def _quietly(command: list[str], namespace: str | None) -> None:
    """A removal whose target may already be gone."""
    try:
        run(command, namespace)
    except ClusterError as exc:
        if not any(gone in str(exc) for gone in ("No such file", "Cannot find", "does not exist", "Invalid handle",
                                                 "Bad rule", "No chain/target/match")):
            raise

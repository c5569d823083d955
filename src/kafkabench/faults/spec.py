"""The fault grammar: `ACTION-TARGET[:SECONDS][,OPTION[=VALUE]...]`, parsed and checked before any cluster starts.

ACTION is a process fault (kill, pause, restart) or a network one (partition, delay, loss, bandwidth); TARGET names
the node it hits when it fires: the leader of the lab's partition, a follower of it, the first KRaft controller, a
node id, the coordinator (of the run's transactions, else of its consumer group), or a consumer: a member of the
run's consumer group (or copier), killed or paused, the members in turn. SECONDS is how long it lasts before it heals
(a clean restart takes none; a killed consumer's slot is then taken by a new process). Options:

- leader, follower: of=input|output (a copier's output topic's partition instead of its input's);

- partition: from=followers|controllers|brokers|clients|all (several joined by +; default all), oneway=in|out (in:
  only packets to the target are cut), reset (refuse with a TCP reset instead of dropping in silence);
- delay: ms=N (one way; a round trip over the target's links takes 2N more), jitter=N, to=TARGET|clients (only
  the packets the target sends there);
- loss: percent=P (of the packets to and from the target);
- bandwidth: mbit=M (each way).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from kafkabench.faults.grammar import Phrase, is_seconds

PROCESS = ("kill", "pause", "restart")
NETWORK = ("partition", "delay", "loss", "bandwidth")
ROLES = ("leader", "follower", "controller", "coordinator", "consumer")
NODE_ROLES = ROLES[:4]  # roles that name a broker or controller
MEMBER_ACTIONS = ("kill", "pause")
PEER_GROUPS = ("followers", "controllers", "brokers", "clients", "all")
DOWN_S = 3.0
OPTIONS = {"partition": ("from", "oneway", "reset"), "delay": ("ms", "jitter", "to"), "loss": ("percent",),
           "bandwidth": ("mbit",)}
REQUIRED = {"delay": "ms", "loss": "percent", "bandwidth": "mbit"}
EXAMPLES = ("kill-leader:5", "pause-follower", "restart-leader", "kill-controller", "kill-2",
            "partition-leader:40,from=followers+controllers", "partition-3:10,from=clients,reset",
            "delay-follower:30,ms=50,jitter=10", "delay-leader:30,ms=20,to=clients", "loss-leader:20,percent=5",
            "bandwidth-follower:30,mbit=10", "kill-consumer:2", "kill-coordinator", "kill-leader,of=output")
_ACTION_TARGET = re.compile(r"^([a-z]+)-([a-z]+|[0-9]+)$")


class FaultSyntaxError(ValueError):
    """A fault text kafkabench cannot read; the message says what is wrong and shows forms that work."""


@dataclass(frozen=True)
class FaultSpec:
    kind: str  # ACTION-TARGET, e.g. kill-leader, partition-2
    down_s: float | None  # None for a clean restart
    options: tuple[tuple[str, str], ...] = ()

    @classmethod
    def parse(cls, text: str) -> FaultSpec:
        phrase = Phrase.read(text)
        named = _ACTION_TARGET.match(phrase.name) if phrase else None
        if not named:
            raise FaultSyntaxError(f"{text!r}: expected ACTION-TARGET[:SECONDS][,OPTION=VALUE...], e.g. "
                                   f"{', '.join(EXAMPLES[:2])} or {EXAMPLES[5]}")
        (action, target), seconds = named.groups(), phrase.number
        if action not in PROCESS + NETWORK:
            raise FaultSyntaxError(f"{text!r}: no fault {action!r}; faults are {', '.join(PROCESS + NETWORK)}")
        if target not in ROLES and not target.isdigit():
            raise FaultSyntaxError(f"{text!r}: the target is leader, follower, controller, coordinator, consumer or a "
                                   f"node id, not {target!r}")
        if target == "consumer" and action not in MEMBER_ACTIONS:
            raise FaultSyntaxError(f"{text!r}: a consumer is killed or paused (kill-consumer, pause-consumer)")
        if action == "restart" and seconds:
            raise FaultSyntaxError(f"{text!r}: a clean restart takes no duration")
        if seconds and not is_seconds(seconds):
            raise FaultSyntaxError(f"{text!r}: the duration is seconds, a number, not {seconds!r}")
        if seconds and float(seconds) <= 0:
            raise FaultSyntaxError(f"{text!r}: the duration must be > 0 s")
        spec = cls(f"{action}-{target}", None if action == "restart" else float(seconds) if seconds else DOWN_S,
                   phrase.options)
        spec._check_options(text)
        return spec

    def _check_options(self, text: str) -> None:
        of = ("of",) if self.role in ("leader", "follower") else ()
        allowed = OPTIONS.get(self.action, ()) + of
        for key, value in self.options:
            if key not in allowed:
                takes = f"takes {', '.join(allowed)}" if allowed else "takes no options"
                raise FaultSyntaxError(f"{text!r}: {self.kind if of else self.action} {takes}, not {key!r}")
            if key in ("ms", "jitter", "percent", "mbit") and not _number(value):
                raise FaultSyntaxError(f"{text!r}: {key} must be a number, not {value!r}")
        if (required := REQUIRED.get(self.action)) and required not in self.option_keys:
            raise FaultSyntaxError(f"{text!r}: {self.action} needs {required}=..., e.g. "
                                   f"{next(e for e in EXAMPLES if e.startswith(self.action))}")
        for group in self.peer_groups:
            if group not in PEER_GROUPS:
                raise FaultSyntaxError(f"{text!r}: from={group}: cut from {', '.join(PEER_GROUPS)} (joined by +)")
        if (way := self.option("oneway")) is not None and way not in ("in", "out"):
            raise FaultSyntaxError(f"{text!r}: oneway={way}: in (packets to the target cut) or out (from it)")
        if (of := self.option("of")) is not None and of not in ("input", "output"):
            raise FaultSyntaxError(f"{text!r}: of={of}: input or output (a copier's topics)")
        if self.option("reset") not in (None, ""):
            raise FaultSyntaxError(f"{text!r}: reset takes no value")
        if (to := self.option("to")) is not None and to not in (*NODE_ROLES, "clients") and not to.isdigit():
            raise FaultSyntaxError(f"{text!r}: to={to}: leader, follower, controller, clients or a node id")
        self._check_ranges(text)

    def _check_ranges(self, text: str) -> None:
        delay, jitter = self.number("ms"), self.number("jitter", 0.0)
        if delay is not None and not (0 < delay <= 10_000 and 0 <= jitter <= delay):
            raise FaultSyntaxError(f"{text!r}: the delay must be above 0 and at most 10000 ms, the jitter from 0 to it")
        if (percent := self.number("percent")) is not None and not 0 < percent < 100:
            raise FaultSyntaxError(f"{text!r}: loss of {percent:g} % is out of range: above 0, below 100")
        if (mbit := self.number("mbit")) is not None and not 0 < mbit <= 100_000:
            raise FaultSyntaxError(f"{text!r}: bandwidth of {mbit:g} Mbit/s is out of range: above 0, at most 100000")

    # ---- what it says -------------------------------------------------------------------------------------

    @property
    def action(self) -> str:
        return self.kind.split("-", 1)[0]

    @property
    def role(self) -> str:
        """leader, follower, controller, or a node id as text."""
        return self.kind.split("-", 1)[1]

    @property
    def label(self) -> str:
        """What the run's events name it: its ACTION-TARGET."""
        return self.kind

    @property
    def is_network(self) -> bool:
        return self.action in NETWORK

    @property
    def option_keys(self) -> set[str]:
        return {key for key, _ in self.options}

    def option(self, key: str) -> str | None:
        return next((value for name, value in self.options if name == key), None)

    def number(self, key: str, default: float | None = None) -> float | None:
        value = self.option(key)
        return float(value) if value is not None else default

    @property
    def peer_groups(self) -> list[str]:
        """Whom a partition cuts the target from (default: all)."""
        return (self.option("from") or "all").split("+")

    @property
    def node_ids(self) -> list[int]:
        """The node ids it names (checked against the cluster before a run starts)."""
        named = [self.role, self.option("to") or ""]
        return [int(name) for name in named if name.isdigit()]


def _number(value: str) -> bool:
    try:
        float(value)
        return True
    except ValueError:
        return False


def parse_fault(text: str) -> str:
    """A scenario field's validator: the text if it parses (FaultSyntaxError is a ValueError, which pydantic shows)."""
    FaultSpec.parse(text)
    return text

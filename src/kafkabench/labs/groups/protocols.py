"""The rebalance protocols a groups cell runs its members under, as each client is told: Java's setting names (the
config translation renames them), or librdkafka's own where the value differs (its assignors have short names).

- eager: the classic protocol with the range assignor: every member gives up every partition at each rebalance.
- cooperative: classic with cooperative-sticky (KIP-429): only the partitions that move are revoked.
- consumer, consumer-range: KIP-848, the broker assigns (its uniform or range assignor) and members reconcile
  incrementally.
- static, consumer-static: a group.instance.id per member slot (KIP-345): a member that closes and comes back within
  the session keeps its partitions, and the group does not rebalance.
- share (`--group-type share`, not a --protocols choice): a share group (KIP-932): the broker hands each member
  records, not partitions, and each record is acknowledged; its members are share consumers.
"""

from __future__ import annotations

from dataclasses import dataclass

RANGE_JAVA = "org.apache.kafka.clients.consumer.RangeAssignor"
COOPERATIVE_JAVA = "org.apache.kafka.clients.consumer.CooperativeStickyAssignor"


@dataclass(frozen=True)
class Protocol:
    name: str
    classic: bool
    assignor: str  # classic: the client's assignor; consumer: the broker's (group.remote.assignor)
    static: bool = False
    clients: tuple[str, ...] = ("confluent", "java")
    words: str = ""
    share: bool = False

    def settings(self, client: str, group: str, slot: int) -> dict[str, str]:
        """The consumer settings of member `slot` under this protocol."""
        if self.share:
            return {}  # a share consumer takes the group's id alone
        settings = {"group.instance.id": f"{group}-member-{slot}"} if self.static else {}
        if not self.classic:
            return {**settings, "group.protocol": "consumer", "group.remote.assignor": self.assignor}
        if client == "java":
            return {**settings, "partition.assignment.strategy": RANGE_JAVA if self.assignor == "range" else COOPERATIVE_JAVA}
        if client == "confluent":
            return {**settings, "librdkafka:partition.assignment.strategy": self.assignor}
        return settings  # kafka-python's and aiokafka's own eager assignors (range first; aiokafka: round robin)


PROTOCOLS = {protocol.name: protocol for protocol in (
    Protocol("eager", True, "range", clients=("confluent", "java", "kafka-python", "aiokafka"),
             words="classic, eager (range)"),
    Protocol("cooperative", True, "cooperative-sticky", words="classic, cooperative-sticky"),
    Protocol("consumer", False, "uniform", words="KIP-848, uniform"),
    Protocol("consumer-range", False, "range", words="KIP-848, range"),
    Protocol("static", True, "range", static=True, clients=("confluent", "java", "kafka-python", "aiokafka"),
             words="classic, range, static members"),
    Protocol("consumer-static", False, "uniform", static=True, words="KIP-848, uniform, static members"),
)}


SHARE = Protocol("share", False, "simple", words="share group (KIP-932)", share=True)


def named(name: str) -> Protocol:
    return SHARE if name == SHARE.name else PROTOCOLS[name]


def unsupported(client: str, protocol: str) -> str | None:
    """Why `client` cannot run `protocol`, in one line; None when it can."""
    if client not in named(protocol).clients and client in ("kafka-python", "aiokafka"):
        return (f"{client} speaks the classic protocol only, and kafkabench runs it with its own eager assignor: "
                f"--protocols {protocol} is for confluent and java; give eager or static for {client}")
    return None

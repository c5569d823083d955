"""The groups lab's planned changes, in the faults' grammar (faults.grammar): `NAME[:COUNT][,OPTION=VALUE...]`.

- rolling-restart[,pause=S]: each member in turn closed cleanly (its last commit, then it leaves the group) and a new
  process started in its slot, S seconds (default 1) between one member's new process being ready and the next close:
  a deploy.
- crash:K[,down=S]: K members killed at once (SIGKILL, no goodbye), each replaced by a new process S seconds (default
  3) later.
- pause:K[,down=S]: K members stopped (SIGSTOP: their connections open, their heartbeats silent) and resumed S
  seconds (default 3) later: a member hung in a long GC or a stuck call. A share member's records wait for their lock
  to expire (--lock-s); a consumer group's member is removed once its session times out.
- scale-out:K: K members added. scale-in:K: the K last members closed cleanly.
- add-partitions:K: K partitions added to the topic (placed by the controller), which the producer writes to once its
  metadata shows them (it refreshes every second in such a cell) and the group reads once its members' or its
  coordinator's metadata does: a classic member's client refreshes every metadata.max.age.ms (librdkafka:
  topic.metadata.refresh.interval.ms), 5 min by default; a KIP-848 coordinator sees them in the cluster's metadata.
- subscribe-topic[:P]: the members subscribe to a pattern (`^TOPIC([.]new)?$`) from the start, and at the change a
  topic it matches, TOPIC.new, is created with P partitions (default: the cell's --partitions) and a second producer
  writes it at --rate until the first one is done. A classic member's client finds the new topic at its next
  metadata refresh (as add-partitions' new partitions); a KIP-848 member's pattern is resolved by the broker.
- none: nothing happens: the group as it is, its pace and its floor (a share group's throughput as members grow past
  the partition count, one cell per member count).
"""

from __future__ import annotations

from dataclasses import dataclass

from kafkabench.faults.grammar import Phrase, is_seconds

KINDS = ("rolling-restart", "crash", "pause", "scale-out", "scale-in", "add-partitions", "subscribe-topic", "none")
COUNTED = ("crash", "pause", "scale-out", "scale-in", "add-partitions")
TOPIC_CHANGES = ("add-partitions", "subscribe-topic")  # the topics change, not the members
OPTIONS = {"rolling-restart": ("pause",), "crash": ("down",), "pause": ("down",)}
DEFAULTS = {"pause": 1.0, "down": 3.0}
EXAMPLES = ("rolling-restart", "rolling-restart,pause=2", "crash:1", "crash:2,down=5", "pause:1,down=40", "scale-out:2",
            "scale-in:1",
            "add-partitions:6", "subscribe-topic", "subscribe-topic:12", "none")


class ChangeSyntaxError(ValueError):
    """A change kafkabench cannot read; the message says what is wrong and shows forms that work."""


@dataclass(frozen=True)
class ChangeSpec:
    kind: str
    count: int  # members it touches (rolling-restart: every member), partitions it adds or creates (0: as the cell's)
    options: tuple[tuple[str, str], ...] = ()

    @classmethod
    def parse(cls, text: str) -> ChangeSpec:
        phrase = Phrase.read(text)
        if phrase is None or phrase.name not in KINDS:
            raise ChangeSyntaxError(f"{text!r}: changes are {', '.join(KINDS)}, e.g. {', '.join(EXAMPLES)}")
        if phrase.name in COUNTED:
            if phrase.number is None or not phrase.number.isdigit() or int(phrase.number) < 1:
                what = "partitions" if phrase.name == "add-partitions" else "members"
                raise ChangeSyntaxError(f"{text!r}: {phrase.name} needs how many {what}, a whole number >= 1: "
                                        f"{phrase.name}:1")
        elif phrase.name == "subscribe-topic" and phrase.number is not None:
            if not phrase.number.isdigit() or int(phrase.number) < 1:
                raise ChangeSyntaxError(f"{text!r}: subscribe-topic takes the new topic's partitions, a whole number "
                                        ">= 1 (subscribe-topic:6), or nothing for the cell's --partitions")
        elif phrase.number is not None:
            raise ChangeSyntaxError(f"{text!r}: {phrase.name} takes no count")
        if unknown := phrase.unknown_option(OPTIONS.get(phrase.name, ())):
            raise ChangeSyntaxError(f"{text!r}: {phrase.name} {unknown}")
        for key, value in phrase.options:
            if not is_seconds(value):
                raise ChangeSyntaxError(f"{text!r}: {key} is seconds, a number >= 0, not {value!r}")
        return cls(phrase.name, int(phrase.number or 0), phrase.options)

    def seconds(self, key: str) -> float:
        return float(dict(self.options).get(key, DEFAULTS[key]))

    @property
    def member_slots(self) -> int:
        """Member processes the change starts beyond the group's first ones (a slot each)."""
        return 0 if self.kind in (*TOPIC_CHANGES, "pause", "none") else max(self.count, 1)

    def check_members(self, members: int, text: str) -> None:
        """A change that names more members than the group has, refused before any process starts."""
        if self.kind in ("crash", "pause", "scale-in") and self.count >= members + (self.kind != "scale-in"):
            most = members - 1 if self.kind == "scale-in" else members
            raise ChangeSyntaxError(f"{text!r}: the group has {members} member(s); {self.kind} takes at most {most}")


def parse_change(text: str) -> str:
    """A pydantic validator: the text, once it reads as a change."""
    ChangeSpec.parse(text)
    return text

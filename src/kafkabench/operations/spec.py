"""The operations' grammar: what an operator does to a cluster on purpose, in the faults' phrase form
(faults.grammar): `NAME[,OPTION[=VALUE]...]`, checked when a scenario is read.

- rolling-restart[,kill][,pause=S]: each broker in turn, by id: stopped (SIGTERM: a controlled shutdown, its
  leadership handed over first; with `kill`, SIGKILL and no hand-over), started again on its data, and waited for
  until every partition of the lab's topic has its full ISR again; S seconds (default 0) between one broker being
  back and the next one's stop.
- elect-leaders: a preferred leader election for every partition of the lab's topic whose leader is not its first
  replica (after a restart, leadership stays where it moved until the controller rebalances it:
  leader.imbalance.check.interval.seconds, 300 s by default).
- config,topic=KEY=VALUE[,brokers=KEY=VALUE...]: settings changed live, the topic's read back after: the lab's
  topic's (topic=), or every broker's dynamic setting as the cluster-wide default (brokers=); several in one
  operation.
- rolling-upgrade:VERSION[,back]: every node restarted in turn on another pinned Kafka release (the dedicated
  controllers first, then the brokers), each back, and the topic's ISR whole, before the next; then the features
  finalized at that release's levels, as Kafka's upgrade notes say (`kafka-features upgrade --release-version`). With
  `back`, not finalized, and every node then rolled back to the release it ran (the brokers first): the way back Kafka
  allows while metadata.version is still the old release's.
- add-broker[,throttle=BYTES]: a new broker joins (the embedded cluster), then takes its share of the topic's
  replicas (their count / the brokers', each from the most loaded broker of its partition), moved as reassign moves
  them.
- reassign,from=B[,to=B2][,partition=P][,throttle=BYTES]: every replica of the lab's topic on broker B (or only
  partition P's) moved to broker B2 (default: per partition, the broker holding the fewest of the topic's replicas
  among those that hold none of that partition), in the replica's place in the list; with a replication throttle of
  BYTES per second on the brokers involved while it moves, as `kafka-reassign-partitions --throttle` sets it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from kafkabench.faults.grammar import Phrase, is_seconds

KINDS = ("rolling-restart", "rolling-upgrade", "elect-leaders", "config", "reassign", "add-broker")
OPTIONS = {"rolling-restart": ("kill", "pause"), "rolling-upgrade": ("back",), "config": ("topic", "brokers"),
           "reassign": ("from", "to", "partition", "throttle"), "add-broker": ("throttle",)}
EXAMPLES = ("rolling-restart", "rolling-restart,kill", "rolling-upgrade:4.4.0", "elect-leaders",
            "config,topic=min.insync.replicas=3", "reassign,from=1,to=4,throttle=10000000")
WHOLE = {"from": "a broker id", "to": "a broker id", "partition": "a partition number",
         "throttle": "bytes per second, a whole number > 0"}
_SETTING = re.compile(r"^[a-z0-9]+(?:[._-][a-z0-9]+)*=[^=]+$")
RESTARTS = ("rolling-restart", "rolling-upgrade")  # operations that restart broker processes: two brokers at least
PROCESSES = (*RESTARTS, "add-broker")  # operations that start or stop broker processes: the embedded cluster only
_RELEASE = re.compile(r"^[0-9]+\.[0-9]+\.[0-9]+$")


class OperationSyntaxError(ValueError):
    """An operation kafkabench cannot read; the message says what is wrong and shows forms that work."""


@dataclass(frozen=True)
class OperationSpec:
    kind: str
    options: tuple[tuple[str, str], ...] = ()
    version: str | None = None  # rolling-upgrade's release
    down_s = None  # an operation is over when its last step is: nothing to heal after it

    @classmethod
    def parse(cls, text: str) -> OperationSpec:
        phrase = Phrase.read(text)
        if phrase is None or phrase.name not in KINDS:
            raise OperationSyntaxError(f"{text!r}: operations are {', '.join(KINDS)}, e.g. {', '.join(EXAMPLES)}")
        if phrase.name == "rolling-upgrade":
            if phrase.number is None or not _RELEASE.match(phrase.number):
                raise OperationSyntaxError(f"{text!r}: rolling-upgrade takes the Kafka release to move to, "
                                           "rolling-upgrade:4.4.0")
        elif phrase.number is not None:
            raise OperationSyntaxError(f"{text!r}: {phrase.name} takes no number")
        if unknown := phrase.unknown_option(OPTIONS.get(phrase.name, ())):
            raise OperationSyntaxError(f"{text!r}: {phrase.name} {unknown}")
        for key, value in phrase.options:
            if key in ("kill", "back") and value:
                raise OperationSyntaxError(f"{text!r}: {key} takes no value")
            if key == "pause" and not is_seconds(value):
                raise OperationSyntaxError(f"{text!r}: pause is seconds, a number >= 0, not {value!r}")
            if key in ("topic", "brokers") and not _SETTING.match(value):
                raise OperationSyntaxError(f"{text!r}: {key}= takes a setting, KEY=VALUE: {key}=min.insync.replicas=3")
            if key in WHOLE and not (value.isdigit() and (key != "throttle" or int(value) > 0)):
                raise OperationSyntaxError(f"{text!r}: {key} is {WHOLE[key]}, not {value!r}")
        if phrase.name == "reassign" and "from" not in dict(phrase.options):
            raise OperationSyntaxError(f"{text!r}: reassign needs the broker to move from: reassign,from=1[,to=4]")
        if phrase.name == "reassign" and dict(phrase.options).get("to") == dict(phrase.options)["from"]:
            raise OperationSyntaxError(f"{text!r}: from and to are the same broker")
        if phrase.name == "config" and not phrase.options:
            raise OperationSyntaxError(f"{text!r}: config needs a setting: config,topic=KEY=VALUE or "
                                       "config,brokers=KEY=VALUE")
        return cls(phrase.name, phrase.options, phrase.number)

    @property
    def label(self) -> str:
        """The operation as written, its release and options included ("rolling-restart,kill",
        "rolling-upgrade:4.4.0"): what the run's events name."""
        return ",".join([self.kind + (f":{self.version}" if self.version else ""),
                         *(f"{key}={value}" if value else key for key, value in self.options)])

    @property
    def restarts(self) -> bool:
        return self.kind in RESTARTS

    @property
    def starts_processes(self) -> bool:
        return self.kind in PROCESSES

    @property
    def kill(self) -> bool:
        return any(key == "kill" for key, _ in self.options)

    @property
    def back(self) -> bool:
        return any(key == "back" for key, _ in self.options)

    @property
    def pause_s(self) -> float:
        return float(dict(self.options).get("pause") or 0.0)

    def number(self, key: str) -> int | None:
        """A whole-number option's value (reassign's from, to, partition, throttle); None when not given."""
        value = dict(self.options).get(key)
        return None if value is None else int(value)

    def settings(self, of: str) -> dict[str, str]:
        """config: the settings it makes on `of` (topic, brokers), KEY -> VALUE."""
        return dict(value.split("=", 1) for key, value in self.options if key == of)


def parse_operation(text: str) -> str:
    """A scenario field's validator: the text if it parses (OperationSyntaxError is a ValueError, which pydantic
    shows)."""
    OperationSpec.parse(text)
    return text

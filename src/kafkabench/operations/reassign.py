"""`reassign`: a broker's replicas of a topic moved to another broker while the load runs, throttled or not.

- `plan`: which partitions move where; a broker the cluster does not have, a partition with nowhere to go or nothing
  on the broker is one ConfigError line, before the run.
- `move`: the throttle set (as `kafka-reassign-partitions --throttle` sets it: a rate on every broker involved, the
  moving partitions' old replicas as leader-throttled and their new ones as follower-throttled; replicas in sync are
  never throttled), the reassignment submitted, the metadata read until each partition's replicas are the new ones
  (the controller finishes a move once the new replicas are in sync), the bytes on the new replicas read, the
  throttle removed. A move not done within the bound is cancelled and said so.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable

from confluent_kafka.admin import ResourceType

from kafkabench.admin import KafkaAdmin
from kafkabench.connection import Connection
from kafkabench.errors import ConfigError, KafkaAdminError, KafkabenchError
from kafkabench.operations.spec import OperationSpec

ADMIN_TIMEOUT_S = 30.0
LOOK_S = 0.2  # how often the metadata is read while partitions move
RATES = ("leader.replication.throttled.rate", "follower.replication.throttled.rate")
LEADER_REPLICAS, FOLLOWER_REPLICAS = "leader.replication.throttled.replicas", "follower.replication.throttled.replicas"

Replicas = dict[int, tuple[int, ...]]  # partition -> its brokers, the preferred leader first


def plan(spec: OperationSpec, replicas: Replicas, brokers: list[int]) -> dict[int, list[int]]:
    """Each moving partition's new replicas: the broker moved from replaced, in its place, by the one moved to (given,
    or the broker holding the fewest of the topic's replicas among those holding none of the partition's). A
    partition that the broker given to move to already holds stays where it is."""
    source, target, only = spec.number("from"), spec.number("to"), spec.number("partition")
    for broker in (source, target):
        if broker is not None and broker not in brokers:
            raise ConfigError(f"{spec.label}: the cluster has no broker {broker} (brokers "
                              f"{', '.join(map(str, brokers))})")
    if only is not None and only not in replicas:
        raise ConfigError(f"{spec.label}: the topic has no partition {only} (it has {len(replicas)})")
    moving = {p: held for p, held in sorted(replicas.items()) if source in held and only in (None, p)}
    if not moving:
        raise ConfigError(f"{spec.label}: broker {source} holds no replica of "
                          f"{'the topic' if only is None else f'partition {only}'}: nothing to move")
    load = Counter(b for held in replicas.values() for b in held)  # a broker holding none: 0
    moves = {}
    for partition, held in moving.items():
        free = [broker for broker in brokers if broker not in held]
        if not free:
            raise ConfigError(f"{spec.label}: partition {partition} has a replica on every broker ({len(brokers)} "
                              f"brokers, RF {len(held)}): nowhere to move it; give the cluster more brokers "
                              "(--brokers) or the topic fewer replicas")
        if target is not None and target not in free:
            continue  # a broker holds one replica of a partition at most: this one stays
        to = target if target is not None else min(free, key=lambda broker: (load[broker], broker))
        load[to] += 1
        moves[partition] = [to if broker == source else broker for broker in held]
    if not moves:
        raise ConfigError(f"{spec.label}: broker {target} already holds a replica of every partition broker {source} "
                          "holds: nothing can move to it")
    return moves


def check(spec: OperationSpec, bootstrap: str | Connection, topic: str | None, replication_factor: int) -> None:
    """Before the run: the move can be planned on the topic as it is, or before it is made, on a partition of
    `replication_factor` replicas, one on the broker moved from."""
    with KafkaAdmin(bootstrap, timeout_s=ADMIN_TIMEOUT_S) as admin:
        brokers = sorted(admin.brokers())
        if topic is not None:
            plan(spec, placement(admin, topic), brokers)
            return
        source, target = spec.number("from"), spec.number("to")
        others = [broker for broker in brokers if broker not in (source, target)] + [target] * (target in brokers)
        plan(spec, {spec.number("partition") or 0: (source, *others[:replication_factor - 1])}, brokers)


def move(spec: OperationSpec, bootstrap: str | Connection, topic: str, clock: Callable[[], float],
         timeout_s: float) -> tuple[str, list[dict], str | None]:
    """What was done, in words, a step per partition moved (its replicas before and after, when its move was done
    and the bytes its new replica held then), and what went wrong after the moves were submitted (None: nothing):
    kept beside the steps, not raised, so the steps are not lost."""
    throttle = spec.number("throttle")
    with KafkaAdmin(bootstrap, timeout_s=ADMIN_TIMEOUT_S) as admin:
        before = placement(admin, topic)
        moves = plan(spec, before, sorted(admin.brokers()))
        steps, problems = carry_out(admin, topic, before, moves, throttle, clock, timeout_s)
    source = spec.number("from")
    stayed = [p for p, held in before.items() if source in held and p not in moves and spec.number("partition")
              in (None, p)]
    what = (f"partition(s) {', '.join(str(step['partition']) for step in steps)} of {topic} moved from broker "
            f"{source} to broker(s) {moved_to(steps)} ({throttled(throttle)}, {moved_bytes(steps):,} bytes on the new "
            "replicas when done)"
            + (f"; partition(s) {', '.join(map(str, stayed))} stayed: broker {spec.number('to')} already held them"
               if stayed else ""))
    return what, steps, "; ".join(problems) or None


def carry_out(admin: KafkaAdmin, topic: str, before: Replicas, moves: dict[int, list[int]], throttle: int | None,
              clock: Callable[[], float], timeout_s: float) -> tuple[list[dict], list[str]]:
    """The moves made (throttled if asked, the throttle removed after): a step per partition, and what went wrong
    once they were submitted."""
    steps = [{"partition": p, "from": list(before[p]), "to": new, "submitted_s": None, "done_s": None,
              "bytes": None} for p, new in moves.items()]
    involved = sorted({broker for p, new in moves.items() for broker in (*before[p], *new)})
    if throttle:
        _throttle(admin, topic, before, moves, involved, throttle)
    problems: list[str] = []
    try:
        admin.reassign(topic, moves)
        for step in steps:
            step["submitted_s"] = round(clock(), 3)
        problems = _finish(admin, topic, steps, clock, timeout_s, throttle)
    finally:
        if throttle:
            try:
                _unthrottle(admin, topic, involved)
            except KafkabenchError as exc:  # the cluster stays throttled: the user must know, and how to undo it
                problems.append(f"the throttle was not removed ({exc}): remove {', '.join(RATES)} from brokers "
                                f"{', '.join(map(str, involved))} and {LEADER_REPLICAS}, {FOLLOWER_REPLICAS} "
                                f"from {topic} with kafka-configs --alter --delete-config")
    return steps, problems


def onto(replicas: Replicas, brokers: list[int], new: int) -> dict[int, list[int]]:
    """A new broker's share of the topic's replicas (their count / the brokers', rounded down), each taken from the
    most loaded broker among the partition's replicas, in that replica's place; the partitions in turn."""
    load = Counter(b for held in replicas.values() for b in held)  # a broker holding none: 0
    share = sum(load.values()) // len(brokers)
    moves: dict[int, list[int]] = {}
    for partition, held in sorted(replicas.items()):
        if load[new] >= share:
            break
        if new in held:
            continue
        source = max(held, key=lambda broker: (load[broker], broker))
        if load[source] <= share:
            continue
        load[source], load[new] = load[source] - 1, load[new] + 1
        moves[partition] = [new if broker == source else broker for broker in held]
    return moves


def throttled(throttle: int | None) -> str:
    return f"throttled at {throttle:,} B/s" if throttle else "unthrottled"


def moved_to(steps: list[dict]) -> str:
    return ", ".join(map(str, sorted({b for step in steps for b in step["to"] if b not in step["from"]})))


def moved_bytes(steps: list[dict]) -> int:
    return sum(step["bytes"] or 0 for step in steps)


def _finish(admin: KafkaAdmin, topic: str, steps: list[dict], clock: Callable[[], float], timeout_s: float,
            throttle: int | None) -> list[str]:
    """Waits for the moves; the ones not done at the bound are cancelled and said; else the new replicas' bytes are
    read. What went wrong, in words (empty: nothing)."""
    late = _wait_done(admin, topic, steps, clock, timeout_s)
    if late:
        admin.reassign(topic, {p: None for p in late})
        return [f"partition(s) {', '.join(map(str, late))} of {topic} not moved within {timeout_s:g} s "
                "(--heal-timeout): the reassignment was cancelled" + (
                    f"; a throttle of {throttle:,} B/s below the rate the partitions are written at never catches up"
                    if throttle else "")]
    _new_bytes(admin, topic, steps)
    return []


def placement(admin: KafkaAdmin, topic: str) -> Replicas:
    """Each partition's replicas now, the preferred leader first."""
    return {p.partition: p.replicas for p in admin.describe_topic(topic).partitions}


def _wait_done(admin: KafkaAdmin, topic: str, steps: list[dict], clock: Callable[[], float],
               timeout_s: float) -> list[int]:
    """Reads the metadata every LOOK_S until each step's partition has exactly its new replicas; the partitions
    still moving at the bound."""
    deadline = time.monotonic() + timeout_s
    while (waiting := [step for step in steps if step["done_s"] is None]) and time.monotonic() < deadline:
        time.sleep(LOOK_S)
        try:
            now = placement(admin, topic)
        except KafkaAdminError:  # a look that got no answer: the next one may
            continue
        for step in waiting:
            if list(now.get(step["partition"], ())) == step["to"]:
                step["done_s"] = round(clock(), 3)
    return [step["partition"] for step in steps if step["done_s"] is None]


def _new_bytes(admin: KafkaAdmin, topic: str, steps: list[dict]) -> None:
    """Each step's new replica's bytes on disk (DescribeLogDirs), read once every move is done."""
    sizes = {(size.partition, size.broker): size.size_bytes for size in admin.stored_bytes(topic)}
    for step in steps:
        step["bytes"] = sum(sizes.get((step["partition"], broker), 0) for broker in step["to"]
                            if broker not in step["from"])


def _throttle(admin: KafkaAdmin, topic: str, before: Replicas, moves: dict[int, list[int]], involved: list[int],
              rate: int) -> None:
    for broker in involved:
        admin.set_configs(ResourceType.BROKER, str(broker), {key: str(rate) for key in RATES}, f"broker {broker}'s")
    admin.set_topic_config(topic, {
        LEADER_REPLICAS: ",".join(f"{p}:{broker}" for p in moves for broker in before[p]),
        FOLLOWER_REPLICAS: ",".join(f"{p}:{broker}" for p, new in moves.items() for broker in new
                                    if broker not in before[p])})


def _unthrottle(admin: KafkaAdmin, topic: str, involved: list[int]) -> None:
    for broker in involved:
        admin.delete_configs(ResourceType.BROKER, str(broker), list(RATES), f"broker {broker}'s")
    admin.delete_configs(ResourceType.TOPIC, topic, [LEADER_REPLICAS, FOLLOWER_REPLICAS], f"topic {topic}'s")

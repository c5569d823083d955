"""The clusters a tune's trials run on, when its space reaches past the client (`broker:`, `jvm:`): the cluster the
tune was given for the brokers' own settings, and an embedded cluster of the same size per other broker variant,
started the first time a trial needs it and kept for the trials after it (the newest few: a variant sampled again
soon costs no restart, and the machine does not fill with idle brokers). A new cluster runs the default's workload
once, unmeasured, before its first trial: its JIT and caches as warm as the given cluster's, which the default's
own runs warmed."""

from __future__ import annotations

import contextlib
import dataclasses
from collections import OrderedDict
from collections.abc import Callable

from kafkabench.cluster.target import Target, variant_target
from kafkabench.cluster.variant import BrokerVariant
from kafkabench.core.events import Listener
from kafkabench.errors import ConfigError
from kafkabench.labs.tune.space import BROKER_ROLES, SearchSpace

KEPT = 2  # variant clusters left running beside the given one


def refuse_on_a_foreign_cluster(target: Target, space: SearchSpace) -> None:
    if not target.started_here:
        named = ", ".join(f"{d.role} {d.name}" for d in space.dimensions if d.role in BROKER_ROLES)
        raise ConfigError(f"{space.source}: {named}: these need brokers kafkabench starts (it does not restart "
                          "brokers it did not start); tune them on the embedded cluster, without --bootstrap-servers, "
                          "or take them out of the space")


class TrialClusters:
    def __init__(self, given: Target, brokers: int, listener: Listener, warm: Callable[[Target], object]) -> None:
        self.given, self.brokers, self.listener, self.warm = given, brokers, listener, warm
        self._running: OrderedDict[BrokerVariant, tuple[contextlib.ExitStack, Target]] = OrderedDict()

    def target(self, variant: BrokerVariant) -> Target:
        if variant.is_default:
            return self.given
        if variant in self._running:
            self._running.move_to_end(variant)
            return self._running[variant][1]
        while len(self._running) >= KEPT:
            self._running.pop(next(iter(self._running)))[0].close()
        with contextlib.ExitStack() as stack:
            started = stack.enter_context(variant_target(variant, self.listener.note, "kafkabench-tune-brokers-",
                                                         brokers=self.brokers))
            target = dataclasses.replace(started, launcher=self.given.launcher)
            self._running[variant] = (stack.pop_all(), target)
        self.warm(target)
        return target

    def close(self) -> None:
        while self._running:
            self._running.popitem(last=False)[1][0].close()

"""The clusters a tune's trials run on, when its space reaches past the client (`broker:`, `jvm:`): the cluster the
tune was given for the brokers' own settings, and an embedded cluster of the same size per other broker variant,
started the first time a trial needs it and kept for the trials after it (the newest few: a variant sampled again
soon costs no restart, and the machine does not fill with idle brokers). A new cluster runs the default's workload
once, unmeasured, before its first trial: its JIT and caches as warm as the given cluster's, which the default's
own runs warmed."""

from __future__ import annotations

import dataclasses
import shutil
import tempfile
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path

from kafkabench.cluster.embedded import EmbeddedCluster
from kafkabench.cluster.target import Target
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
        self._running: OrderedDict[BrokerVariant, tuple[EmbeddedCluster, Path, Target]] = OrderedDict()

    def target(self, variant: BrokerVariant) -> Target:
        if variant.is_default:
            return self.given
        if variant in self._running:
            self._running.move_to_end(variant)
            return self._running[variant][2]
        while len(self._running) >= KEPT:
            self._stop(next(iter(self._running)))
        work = Path(tempfile.mkdtemp(prefix="kafkabench-tune-brokers-"))
        self.listener.note(f"starting brokers for the trials with {variant.describe()}")
        cluster = EmbeddedCluster(brokers=self.brokers, directory=work, broker_config_overrides=dict(variant.settings),
                                  kafka_version=variant.kafka_version, jvm_options=variant.jvm_options)
        try:
            cluster.start()
        except BaseException:
            shutil.rmtree(work, ignore_errors=True)
            raise
        target = dataclasses.replace(Target.embedded(cluster, "embedded-temporary"), launcher=self.given.launcher)
        self._running[variant] = (cluster, work, target)
        self.warm(target)
        return target

    def close(self) -> None:
        for variant in list(self._running):
            self._stop(variant)

    def _stop(self, variant: BrokerVariant) -> None:
        cluster, work, _ = self._running.pop(variant)
        try:
            cluster.stop()
        finally:
            shutil.rmtree(work, ignore_errors=True)

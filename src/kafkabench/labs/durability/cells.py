"""The durability lab's cells: topic settings x producer settings x client, what Kafka makes of them
(min.insync.replicas capped at the replica count), what cannot be placed on the cluster, and the order cells
run in per repeat. What a client refuses (an idempotent producer without acks=all) is the client's to say:
its worker's configuration error marks the cell refused, with the client's own words."""

from __future__ import annotations

import itertools
import random
from dataclasses import dataclass

from kafkabench.errors import ConfigError
from kafkabench.labs.durability.scenario import DurabilityScenario


@dataclass(frozen=True)
class Cell:
    name: str
    partitions: int
    replication_factor: int
    min_isr: int
    acks: str
    idempotence: bool
    client: str

    @property
    def effective_min_isr(self) -> int:
        """Kafka counts min.insync.replicas against the ISR, which never holds more than the replicas."""
        return min(self.min_isr, self.replication_factor)

    @property
    def min_isr_note(self) -> str:
        if self.min_isr > self.replication_factor:
            return f"min.insync.replicas {self.min_isr} capped to {self.effective_min_isr} by {self.replication_factor} replica(s)"
        return ""

    @property
    def topic_label(self) -> str:
        return f"p{self.partitions} rf{self.replication_factor} isr{self.min_isr}"

    @property
    def producer_label(self) -> str:
        return f"acks={self.acks} idem={'on' if self.idempotence else 'off'}"

    @property
    def label(self) -> str:
        return f"{self.name} {self.client}" if self.name else f"{self.topic_label} {self.producer_label} {self.client}"

    def producer_settings(self) -> dict[str, str]:
        return {"acks": self.acks, "enable.idempotence": "true" if self.idempotence else "false"}

    def topic_settings(self) -> dict[str, str]:
        return {"min.insync.replicas": str(self.min_isr)}


# the seed's three topics: (name, partitions, RF, min.insync, acks); its Spring Boot producer left idempotence off
SEED_TOPICS = (("yolo", 2, 2, 1, "1"), ("throughput-rf3", 2, 3, 1, "1"), ("durable", 2, 3, 2, "all"))


def expand(scenario: DurabilityScenario) -> list[Cell]:
    if scenario.preset == "seed":
        return [Cell(name, p, rf, isr, acks, False, client)
                for client in scenario.clients for name, p, rf, isr, acks in SEED_TOPICS]
    return [Cell("", p, rf, isr, acks, idem == "on", client)
            for client, p, rf, isr, acks, idem in itertools.product(
                scenario.clients, scenario.partitions, scenario.replication_factors, scenario.min_isr,
                scenario.acks, scenario.idempotence)]


def check_fits(cells: list[Cell], brokers: int) -> None:
    """A replication factor above the broker count cannot be placed: refuse before anything runs."""
    too_many = sorted({c.replication_factor for c in cells if c.replication_factor > brokers})
    if too_many:
        raise ConfigError(f"replication factor {', '.join(map(str, too_many))} needs as many brokers; the cluster has "
                          f"{brokers} (drop those values, or use a bigger cluster)")


def run_order(cells: list[Cell], repeat: int, order: str, seed: int) -> list[Cell]:
    """The cells of one repeat (0-based) in the order they run: shuffled with a per-repeat generator derived
    from `seed` (so any repeat's order can be reproduced alone), or the seed's fixed forward / reverse order."""
    if order == "sequential":
        return list(cells)
    if order == "reverse":
        return list(reversed(cells))
    shuffled = list(cells)
    random.Random(f"{seed}:{repeat}").shuffle(shuffled)
    return shuffled

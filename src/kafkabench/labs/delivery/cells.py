"""The delivery lab's cells: client x producer mode x acks x idempotence x replication factor x min.insync,
each described in the words of its verdict ("acks=1, RF 3, min.insync 1, leader killed 3x").

acks, idempotence and min.insync.replicas are axes, or, when an axis is not given, the one value the settings
(a profile, a .properties file, -X) give; both at once is refused, since one would silently lose."""

from __future__ import annotations

import itertools
from dataclasses import dataclass

from kafkabench import clients as client_registry
from kafkabench.errors import ConfigError
from kafkabench.labs.delivery.scenario import DeliveryScenario
from kafkabench.labs.durability.cells import Cell as TopicAndProducer
from kafkabench.operations.spec import KINDS as OPERATIONS

AXES = {"acks": ("producer", "acks", "--acks"), "idempotence": ("producer", "enable.idempotence", "--idempotence"),
        "min_isr": ("topic_config", "min.insync.replicas", "--min-isr")}
DEFAULTS = {"acks": "all", "idempotence": "off", "min_isr": 1}
CONSUMING_MODES = ("auto-commit", "commit-after", "commit-before", "copy")
PAST = {"kill": "killed", "pause": "paused", "restart": "restarted", "partition": "cut off", "delay": "delayed",
        "loss": "losing packets", "bandwidth": "throttled"}


@dataclass(frozen=True)
class DeliveryCell:
    settings: TopicAndProducer  # partitions, RF, min.insync, acks, idempotence, client
    mode: str
    transaction_version: int | None = None  # the cluster's transaction.version during the cell; None: as it is

    @property
    def client(self) -> str:
        return self.settings.client

    @property
    def sleep_ms(self) -> int:
        return int(self.mode.split(":", 1)[1]) if self.mode.startswith("async-sleep:") else 0

    @property
    def worker_mode(self) -> str:
        return self.mode.split(":", 1)[0]

    @property
    def consuming(self) -> bool:
        """A consumer (or copier) cell: `mode` is the consumer's."""
        return self.mode in CONSUMING_MODES

    @property
    def label(self) -> str:
        s = self.settings
        version = "" if self.transaction_version is None else f" tv{self.transaction_version}"
        if self.consuming:
            return f"{self.mode} rf{s.replication_factor} isr{s.min_isr}{version} {s.client}"
        return (f"{self.mode} acks={s.acks} idem={'on' if s.idempotence else 'off'} rf{s.replication_factor} "
                f"isr{s.min_isr}{version} {s.client}")

    def describe(self, faults: list[str], bounces: int) -> str:
        """The settings in words, as a verdict starts: "async-close, acks=1, RF 3, min.insync 1, leader killed 3x";
        the client is said beside it."""
        s = self.settings
        version = [] if self.transaction_version is None else [f"transaction.version {self.transaction_version}"]
        if self.consuming:
            words = ["copier" if self.mode == "copy" else f"{self.mode} consumer",
                     f"RF {s.replication_factor}", f"min.insync {s.effective_min_isr}", *version]
            return ", ".join(words + fault_words(faults, bounces))
        words = [self.mode, f"acks={s.acks}", *(["idempotent"] if s.idempotence else []),
                 f"RF {s.replication_factor}", f"min.insync {s.effective_min_isr}", *version]
        return ", ".join(words + fault_words(faults, bounces))

    def describe_transactions(self, size: int | None, abort_ratio: float) -> str:
        return "" if size is None else f", in transactions of {size}" + (f", {abort_ratio:g} aborted" if abort_ratio else "")


def fault_words(faults: list[str], bounces: int) -> list[str]:
    """"leader killed 3x" per fault kind, "rolling-restart,kill 1x" per operation, counting the turns each takes of
    `bounces`."""
    turns = [_kind(faults[i % len(faults)]) for i in range(bounces)] if faults else []
    return [fault_word(kind, turns.count(kind)) for kind in dict.fromkeys(turns)]


def fault_word(kind: str, times: int) -> str:
    """"leader killed 2x" for a fault's ACTION-TARGET, "rolling-restart,kill 1x" for an operation."""
    if _operation(kind):
        return f"{kind} {times}x"
    action, role = kind.split("-", 1)
    return f"{role} {PAST[action]} {times}x"


def _kind(text: str) -> str:
    """A fault's ACTION-TARGET; an operation's whole text (its release and options say which variant)."""
    return text if _operation(text) else text.split(":", 1)[0].split(",", 1)[0]


def _operation(text: str) -> bool:
    """An operation's text ("rolling-upgrade:4.4.0", "reassign,from=1"), not a fault's."""
    return text.split(",", 1)[0].split(":", 1)[0] in OPERATIONS


def cell_settings(cell: DeliveryCell, scenario: DeliveryScenario):
    """The scenario's client and topic settings with the cell's acks, idempotence and min.insync.replicas."""
    return scenario.settings({"producer": cell.settings.producer_settings(), "topic": cell.settings.topic_settings()})


def cell_params(cell: DeliveryCell, scenario: DeliveryScenario) -> dict:
    s = cell.settings
    return {"cell": cell.label, "mode": cell.mode,
            "settings": cell.describe(scenario.planned, scenario.bounces)
            + cell.describe_transactions(scenario.transactions, scenario.abort_ratio),
            **({"transactions": {"size": scenario.transactions, "abort_ratio": scenario.abort_ratio}}
               if scenario.transactions else {}),
            "partitions": s.partitions, "replication_factor": s.replication_factor, "min_insync_replicas": s.min_isr,
            **({"transaction_version": cell.transaction_version} if cell.transaction_version is not None else {}),
            "effective_min_isr": s.effective_min_isr, "acks": s.acks, "idempotence": "on" if s.idempotence else "off",
            "count": scenario.count, "size_bytes": scenario.size, "rate": scenario.rate}


def expand(scenario: DeliveryScenario) -> list[DeliveryCell]:
    for client in scenario.clients:
        if client not in client_registry.KAFKA_CLIENTS:
            raise ConfigError(f"--clients {client}: the delivery lab runs Kafka clients: "
                              f"{', '.join(client_registry.KAFKA_CLIENTS)}")
    acks, idempotence, min_isr = (_axis(scenario, name) for name in AXES)
    modes = scenario.modes
    if scenario.transactions is not None:
        acks, idempotence = _transactional(scenario, acks, idempotence)
    if scenario.consuming:
        modes, acks, idempotence = _consuming(scenario, acks, idempotence)
    return [DeliveryCell(TopicAndProducer("", scenario.partitions, rf, int(isr), a, idem == "on", client), mode, version)
            for client, mode, a, idem, rf, isr, version in itertools.product(
                scenario.clients, modes, acks, idempotence, scenario.replication_factors, min_isr,
                scenario.transaction_versions or [None])]


def _consuming(scenario: DeliveryScenario, acks: list, idempotence: list) -> tuple[list, list, list]:
    """Consumer cells: one per consumer mode (or the copier's "copy"), their input written by an idempotent producer
    with acks=all, so that what the consumers are judged by is not muddied by the producer."""
    if scenario.consumers > scenario.partitions:
        raise ConfigError(f"--consumers {scenario.consumers} with {scenario.partitions} partitions: a group gives each "
                          f"partition to one member, so {scenario.consumers - scenario.partitions} would sit idle; "
                          "give at most as many consumers as partitions")
    if (_given(scenario, "acks") and set(acks) != {"all"}) or (_given(scenario, "idempotence") and set(idempotence) != {"on"}):
        raise ConfigError("--consumer-modes and --copier: the input producer is idempotent with acks=all; drop acks "
                          "and enable.idempotence from the producer settings")
    if scenario.copier and any("transactional.id" in found for found in (scenario.producer, scenario.overrides)):
        raise ConfigError("--copier: kafkabench gives each copier a transactional.id of its own, new for each cell, so "
                          "no other run's can fence it; drop transactional.id from the settings")
    return list(scenario.consumer_modes or ["copy"]), ["all"], ["on"]


TRANSACTIONAL_CLIENTS = ("confluent", "java")


def _transactional(scenario: DeliveryScenario, acks: list, idempotence: list) -> tuple[list, list]:
    """A transactional producer is idempotent with acks=all (Kafka refuses it otherwise): the defaults become those,
    anything else given is refused, and so is a client kafkabench does not drive transactions with."""
    others = [client for client in scenario.clients if client not in TRANSACTIONAL_CLIENTS]
    if others:
        raise ConfigError(f"--transactions: kafkabench drives transactions with {' and '.join(TRANSACTIONAL_CLIENTS)}; "
                          f"not with {', '.join(others)}")
    given = {name: _given(scenario, name) for name in ("acks", "idempotence")}
    if given["acks"] and set(acks) != {"all"}:
        raise ConfigError(f"--transactions needs acks=all (Kafka refuses a transactional producer without it), "
                          f"not {', '.join(a for a in acks if a != 'all')}")
    if given["idempotence"] and set(idempotence) != {"on"}:
        raise ConfigError("--transactions needs idempotence on (Kafka refuses a transactional producer without it)")
    if any("transactional.id" in found for found in (scenario.producer, scenario.overrides)):
        raise ConfigError("--transactions: kafkabench gives each producer a transactional.id of its own, new for each "
                          "cell, so no other run's can fence it; drop transactional.id from the settings")
    return ["all"], ["on"]


def _given(scenario: DeliveryScenario, name: str) -> bool:
    """Whether the axis `name` was given, by its flag or by a setting."""
    return getattr(scenario, name) is not None or any(AXES[name][1] in found for found in (
        getattr(scenario, AXES[name][0]), scenario.overrides))


def _axis(scenario: DeliveryScenario, name: str) -> list:
    field_name, key, flag = AXES[name]
    given = getattr(scenario, name)
    settings = [getattr(scenario, field_name), scenario.overrides]
    setting = next((found[key] for found in settings if key in found), None)
    if given is not None and setting is not None:
        raise ConfigError(f"{setting.source} sets {key}, which this lab sets per cell from {flag}: give the values in "
                          "one place (a setting in both would silently lose one)")
    if given is not None:
        return list(given)
    if setting is None:
        return [DEFAULTS[name]]
    value = setting.value.strip().lower()
    if name == "idempotence":
        if value not in ("true", "false"):
            raise ConfigError(f"{setting.source}: {key}={setting.value}: must be true or false")
        return ["on" if value == "true" else "off"]
    if name == "acks":
        if value not in ("0", "1", "all", "-1"):
            raise ConfigError(f"{setting.source}: {key}={setting.value}: must be 0, 1, all or -1")
        return ["all" if value == "-1" else value]
    if not value.isdigit() or int(value) < 1:
        raise ConfigError(f"{setting.source}: {key}={setting.value}: must be a whole number >= 1")
    return [int(value)]


def without_axes(settings: dict, role_field: str) -> dict:
    """The scenario's settings of a role minus the keys the cells set themselves."""
    keys = {key for field_name, key, _ in AXES.values() if field_name == role_field}
    return {key: value for key, value in settings.items() if key not in keys}


def check_fits(cells: list[DeliveryCell], brokers: int) -> None:
    too_many = sorted({c.settings.replication_factor for c in cells if c.settings.replication_factor > brokers})
    if too_many:
        raise ConfigError(f"replication factor {', '.join(map(str, too_many))} needs as many brokers; the cluster has "
                          f"{brokers} (drop those values, or use a bigger cluster)")

"""Which cluster a run talks to: the one the user named, the running embedded one, or one started for the run;
and what a lab may do there beyond the Kafka protocol (faults, broker processes) and where its workers run."""

from __future__ import annotations

import contextlib
import dataclasses
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from kafkabench.cluster.embedded import SHORT_LIVED_JVM_OPTIONS, EmbeddedCluster, default_cluster_dir
from kafkabench.cluster.faults import EmbeddedFaults, Faults, RefusedFaults
from kafkabench.cluster.listeners import Security
from kafkabench.cluster.state import load_state
from kafkabench.cluster.variant import BrokerVariant
from kafkabench.connection import Connection
from kafkabench.core.environment import short_lived_jvms
from kafkabench.core.launcher import LOCAL_WORKERS, WorkerLauncher
from kafkabench.errors import ConfigError

@dataclass(frozen=True)
class Target:
    bootstrap_servers: str
    kind: str  # "external", "embedded" (already running) or "embedded-temporary" (started for this run)
    kafka_version: str | None = None  # known for a cluster kafkabench started
    faults: Faults = None  # type: ignore[assignment]  # set in __post_init__: refused unless embedded
    launcher: WorkerLauncher = field(default=LOCAL_WORKERS)
    security: tuple[tuple[str, str], ...] = ()  # how to get in, in Java names (see Connection)
    listeners: tuple[Connection, ...] = ()  # every listener of a cluster kafkabench runs, the first the default
    broker_logs: tuple[tuple[int, str], ...] = ()  # (broker id, its log file) where kafkabench runs the brokers
    broker_settings: tuple[tuple[str, str], ...] = ()  # the user's, on brokers kafkabench runs
    jvm_options: tuple[str, ...] = ()  # the user's, on brokers kafkabench runs

    def __post_init__(self) -> None:
        if self.faults is None:
            object.__setattr__(self, "faults", RefusedFaults(self.bootstrap_servers))

    @classmethod
    def external(cls, bootstrap_servers: str, settings: dict[str, str] | None = None) -> Target:
        """`settings`: the user's client settings; their security ones are how kafkabench's own calls get in too."""
        return cls(bootstrap_servers, "external", security=Connection.of(bootstrap_servers, settings).security)

    @classmethod
    def embedded(cls, cluster: EmbeddedCluster, kind: str = "embedded") -> Target:
        cluster.check_routes()  # a running cluster found again: its addresses must still lead into its own bridge
        listeners = tuple(cluster.listener_connection(mode) for mode in cluster.security.listeners)
        return cls(cluster.bootstrap_servers, kind, cluster.kafka_version, EmbeddedFaults(cluster),
                   security=cluster.connection.security, listeners=listeners,
                   broker_logs=tuple((broker, str(cluster.log_file(broker))) for broker in cluster.broker_ids()),
                   broker_settings=tuple(sorted(cluster.overrides.items())), jvm_options=tuple(cluster.jvm_options))

    @property
    def connection(self) -> Connection:
        return Connection(self.bootstrap_servers, self.security)

    def with_settings(self, own: dict[str, str]) -> Target:
        """kafkabench's own calls get in as clients with security settings `own` do: theirs over the listener's."""
        merged = Connection.of(self.bootstrap_servers, {**self.connection.settings, **own})
        return dataclasses.replace(self, security=merged.security)

    @property
    def security_source(self) -> str:
        """Where the security settings a served target adds to its clients' come from, for their provenance."""
        return "the cluster's client.properties" if self.started_here else "the security settings given"

    def listener_for(self, wanted: dict[str, str]) -> Target:
        """On a cluster kafkabench runs with several listeners, security settings that name a `security.protocol`
        (a profile's `tls`, say) get the listener that speaks it; otherwise this target."""
        protocol = wanted.get("security.protocol", "").upper()
        if not protocol or not self.listeners or protocol == self.connection.protocol:
            return self
        mechanism = wanted.get("sasl.mechanism")
        for listener in self.listeners:
            if listener.protocol == protocol and (mechanism is None or listener.mechanism in (None, mechanism)):
                return dataclasses.replace(self, bootstrap_servers=listener.bootstrap_servers,
                                           security=listener.security)
        have = ", ".join(listener.describe() for listener in self.listeners)
        raise ConfigError(f"security.protocol={protocol}: this cluster has no such listener (it has {have}); start one "
                          "with `kafkabench cluster up --security plaintext,ssl,sasl_ssl`, or a plan's "
                          "`cluster: {security: ...}`")

    @property
    def started_here(self) -> bool:
        """kafkabench runs the brokers: their processes can be measured and faulted."""
        return self.kind != "external"


@contextlib.contextmanager
def open_target(
    bootstrap_servers: str | None,
    settings: dict[str, str] | None = None,
    cluster_dir: Path | None = None,
    on_start: Callable[[str], None] = lambda message: None,
    brokers: int = 1,
    controllers: int = 0,
    security: Security | None = None,
    network: str = "loopback",
    variant: BrokerVariant | None = None,
) -> Iterator[Target]:
    """Yield the cluster to use; a cluster started here (`brokers` brokers, `controllers` dedicated controller
    nodes, `security` its listeners, `network` loopback or isolated) is stopped on the way out, whatever happened.
    A `variant` (a Kafka version, broker settings, JVM options) always gets a cluster of its own in `cluster_dir`."""
    if bootstrap_servers:
        yield Target.external(bootstrap_servers, settings)
        return
    directory = cluster_dir or default_cluster_dir()
    if variant is None and load_state(directory) is not None:
        running = EmbeddedCluster.attach(directory)
        if any(broker.alive for broker in running.status().brokers):
            yield Target.embedded(running)
            return
    own, variant = variant is not None, variant or BrokerVariant()
    short_lived = SHORT_LIVED_JVM_OPTIONS if short_lived_jvms() else ()
    cluster = EmbeddedCluster(brokers=brokers, controllers=controllers, directory=directory, security=security,
                              network=network, broker_config_overrides=dict(variant.settings),
                              kafka_version=variant.kafka_version, jvm_options=(*short_lived, *variant.jvm_options))
    shape = f"{brokers} broker{'s' * (brokers > 1)}" + (f" + {controllers} controller{'s' * (controllers > 1)}" if controllers else "") \
        + (", each in a network namespace of its own" if network == "isolated" else "")
    on_start(f"starting an embedded cluster ({shape}; {variant.describe()}) for this run" if own
             else f"no cluster given and none running: starting an embedded one ({shape}) for this run")
    with cluster:
        yield Target.embedded(cluster, "embedded-temporary")


@contextlib.contextmanager
def variant_target(variant: BrokerVariant, on_start: Callable[[str], None] = lambda message: None,
                   prefix: str = "kafkabench-brokers-", **shape) -> Iterator[Target]:
    """Brokers of their own for `variant` (`shape`: open_target's brokers, controllers, security, network), in a
    temporary directory removed once they stopped."""
    with tempfile.TemporaryDirectory(prefix=prefix, ignore_cleanup_errors=True) as work:
        with open_target(None, cluster_dir=Path(work), on_start=on_start, variant=variant, **shape) as target:
            yield target

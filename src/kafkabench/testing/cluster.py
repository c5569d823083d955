"""The cluster a test gets: where it is, how a client connects to it, and its faults as context managers that heal on
exit (the brokers back, every partition's ISR whole again) however the test's block ended."""

from __future__ import annotations

import contextlib
import threading
from pathlib import Path
from typing import Iterator

from kafkabench.cluster import EmbeddedCluster
from kafkabench.cluster.faults import CLIENTS, EmbeddedFaults
from kafkabench.cluster.network.impairments import Impairment
from kafkabench.errors import KafkabenchError

CLIENT_NAMES = ("confluent", "java", "kafka-python", "aiokafka")
BOOTSTRAP_KEY = {"confluent": "bootstrap.servers", "java": "bootstrap.servers", "kafka-python": "bootstrap_servers",
                 "aiokafka": "bootstrap_servers"}


class FaultFailed(KafkabenchError):
    """A fault could not be made, or the cluster did not heal from it within the bound."""


class KafkaCluster:
    """A real Apache Kafka cluster kafkabench started for this test session (see `kafkabench.testing`)."""

    def __init__(self, embedded: EmbeddedCluster, heal_timeout_s: float) -> None:
        self.embedded = embedded
        self.heal_timeout_s = heal_timeout_s
        self._faults = EmbeddedFaults(embedded)

    # ---- where it is and how to connect --------------------------------------------------------

    @property
    def bootstrap_servers(self) -> str:
        return self.embedded.bootstrap_servers

    @property
    def version(self) -> str:
        return self.embedded.kafka_version

    @property
    def brokers(self) -> list[int]:
        return self.embedded.broker_ids()

    def client_config(self, client: str = "confluent") -> dict[str, object]:
        """Everything a client needs to connect, in its own names: `confluent` (confluent-kafka and librdkafka),
        `java` (a Java client's properties), `kafka-python` or `aiokafka` (their keyword arguments). On a secured
        cluster the security settings come with it (certificates and passwords as files the cluster made)."""
        if client not in CLIENT_NAMES:
            raise ValueError(f"client {client!r}: one of {', '.join(CLIENT_NAMES)}")
        connection = self.embedded.connection
        if client == "java":
            security: dict[str, object] = dict(connection.settings)
        elif client == "confluent":
            security = connection.librdkafka()
        else:
            from kafkabench.config.security_clients import translate_security

            security = translate_security(client, connection.settings).config
        return {BOOTSTRAP_KEY[client]: self.bootstrap_servers, **security}

    @property
    def client_properties(self) -> Path | None:
        """A Java client.properties for the cluster (bootstrap and security), for tools that read one; None on a
        plaintext cluster, where `bootstrap.servers` is all a client needs."""
        security = self.embedded.security
        return security.client_properties() if security.secrets_dir is not None else None

    def leader_of(self, topic: str, partition: int = 0) -> int:
        leader = self._do(lambda: self.embedded.leader_of(topic, partition), f"find {topic}[{partition}]'s leader")
        if leader is None:
            raise FaultFailed(f"{topic}[{partition}] has no leader now")
        return leader

    # ---- faults ----------------------------------------------------------------------------------

    @contextlib.contextmanager
    def kill_leader(self, topic: str, partition: int = 0) -> Iterator[int]:
        """The partition's leader killed with -9 (no shutdown, no hand-over); restarted on exit. Yields its id."""
        with self.kill_broker(self.leader_of(topic, partition)) as broker:
            yield broker

    @contextlib.contextmanager
    def kill_broker(self, broker: int) -> Iterator[int]:
        """The broker killed with -9; restarted on its data on exit."""
        with self._healed():
            self._do(lambda: self.embedded.kill_broker(broker), f"kill broker {broker}")
            yield broker

    @contextlib.contextmanager
    def pause_broker(self, broker: int) -> Iterator[int]:
        """SIGSTOP: the broker holds its connections and answers nothing (a long GC pause, a hung host); SIGCONT on
        exit."""
        with self._healed():
            self._do(lambda: self.embedded.pause_broker(broker), f"pause broker {broker}")
            yield broker

    @contextlib.contextmanager
    def restart_broker(self, broker: int) -> Iterator[int]:
        """A clean shutdown (SIGTERM: the broker hands its leaderships over first), down for the block; started
        again on exit, as in a rolling restart."""
        with self._healed():
            self._do(lambda: self.embedded.stop_broker(broker), f"stop broker {broker}")
            yield broker

    @contextlib.contextmanager
    def partition_leader(self, topic: str, partition: int = 0, seconds: float | None = None) -> Iterator[int]:
        """The partition's leader cut off from every other node and from the clients (its process runs on, as after
        a switch failure); healed after `seconds` if given, while the block goes on, and on exit in any case. Needs
        `@pytest.mark.kafka(network="isolated")`. Yields the leader's id."""
        broker = self.leader_of(topic, partition)
        peers = [node for node in self._faults.node_ids() if node != broker] + [CLIENTS]
        with self._impaired(lambda: self._faults.cut(broker, peers), f"cut broker {broker} off", seconds):
            yield broker

    @contextlib.contextmanager
    def delay(self, broker: int, ms: float, jitter_ms: float = 0) -> Iterator[int]:
        """Every packet of the broker's link held `ms` (± `jitter_ms`) longer. Needs an isolated network."""
        with self._impaired(lambda: self._faults.delay(broker, ms, jitter_ms), f"delay broker {broker}"):
            yield broker

    @contextlib.contextmanager
    def limit(self, broker: int, mbit: float) -> Iterator[int]:
        """The broker's link limited to `mbit` Mbit/s each way. Needs an isolated network."""
        with self._impaired(lambda: self._faults.limit(broker, mbit), f"limit broker {broker}"):
            yield broker

    def heal(self) -> list[str]:
        """Every node back (resumed, restarted, its links healed) and every partition's ISR whole, within the heal
        timeout; what had to be done ("restarted broker 2"). Every fault above ends with it."""
        try:
            done = self._faults.bring_back()
            self._faults.wait_healthy(self.heal_timeout_s)
        except KafkabenchError as exc:
            raise FaultFailed(f"the Kafka cluster did not heal: {exc}") from None
        return done

    def mend(self) -> list[str]:
        """What `heal` does, only if a node is down, paused or impaired (a fault made outside the context
        managers); nothing otherwise."""
        try:
            done = self._faults.bring_back()
        except KafkabenchError as exc:
            raise FaultFailed(f"the Kafka cluster could not be brought back: {exc}") from None
        return done + self.heal() if done else []

    @contextlib.contextmanager
    def _healed(self) -> Iterator[None]:
        try:
            yield
        finally:
            self.heal()

    @contextlib.contextmanager
    def _impaired(self, impair, what: str, seconds: float | None = None) -> Iterator[None]:
        if self._faults.network_unavailable() is not None:
            raise FaultFailed(f"cannot {what}: network faults need a cluster on a network of its own, "
                              '@pytest.mark.kafka(network="isolated") (as root)')
        impairment: Impairment = self._do(impair, what)
        healing = threading.Lock()

        def heal_link() -> None:  # once, by the timer or on exit: the network's tools refuse a second heal
            if healing.acquire(blocking=False):
                self._faults.heal(impairment)

        timer = threading.Timer(seconds, heal_link) if seconds is not None else None
        if timer is not None:
            timer.daemon = True
            timer.start()
        try:
            yield
        finally:
            if timer is not None:
                timer.cancel()
                timer.join()  # a heal under way ends first
            try:
                heal_link()
            finally:
                self.heal()

    @staticmethod
    def _do(action, what: str):
        try:
            return action()
        except KafkabenchError as exc:
            raise FaultFailed(f"cannot {what}: {exc}") from None

"""An embedded, real Apache Kafka cluster: KRaft, either combined broker+controller nodes or brokers beside dedicated
controller nodes (as production runs it: losing brokers then never loses the quorum); on loopback, or each node in a
network namespace of its own on a private bridge (`network="isolated"`, see `cluster.network`), where the links
between nodes can be cut, slowed and thinned."""

from __future__ import annotations

import base64
import ipaddress
import os
import shutil
import signal
import subprocess
import time
import uuid
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from importlib import resources
from pathlib import Path

import platformdirs
from confluent_kafka import Producer

from kafkabench.admin import KafkaAdmin, quiet_client_config
from kafkabench.cluster import broker_config, listeners, ports
from kafkabench.cluster.artifacts import JarCache, packaged_manifest, release
from kafkabench.cluster.broker_config import BROKER, COMBINED, CONTROLLER, NodeLayout
from kafkabench.cluster.broker_process import BrokerProcess
from kafkabench.cluster.class_sharing import ClassSharing
from kafkabench.cluster.java import Java, find_java
from kafkabench.cluster.listeners import Security
from kafkabench.cluster.network.bridge import IsolatedNetwork
from kafkabench.cluster.network.routes import check_routes_into
from kafkabench.cluster.node_launcher import MAIN_CLASS, node_jar
from kafkabench.cluster.state import ClusterState, NodeState, clear_state, load_state, save_state
from kafkabench.cluster.status import BrokerStatus, ClusterStatus, security_status
from kafkabench.connection import Connection
from kafkabench.errors import ClusterError, KafkaAdminError
from kafkabench.waiting import wait_until

PROBE_TOPIC = "__kafkabench_probe"
CLASS_LIST = "loaded-classes.lst"  # what a node of each kind loaded, while there is no class-sharing archive
PORT_ATTEMPTS = 3  # starts on fresh free ports when a node lost one of its ports to another process
CONTROLLER_IDS_FROM = 101  # dedicated controllers are nodes 101, 102, ...: brokers keep ids 1..N
KNOWN_TOPIC_S = 15.0  # a new topic reaches every broker in well under a second, a loaded machine's in a few
JVM_OPTIONS = [
    "-Xms512m", "-Xmx1g", "-XX:+UseG1GC", "-XX:MaxGCPauseMillis=20", "-XX:InitiatingHeapOccupancyPercent=35",
    "-XX:+ExplicitGCInvokesConcurrent", "-Djava.awt.headless=true",
]
# for clusters that test rather than measure (a test suite's, an application's tests): the C1 compiler only. On a few
# cores the C2 compiler's threads compete with the brokers for their first minutes: 3 brokers start on 0.64 of the
# CPU, and a 20 s run at 5,000 records/s costs them 0.58 of it (benchmarks/short_lived_jvm.py). A
# measurement keeps C2: its long runs' peak throughput is what production brokers run
SHORT_LIVED_JVM_OPTIONS = ("-XX:TieredStopAtLevel=1",)
# brokers that stop heartbeating are fenced after 3 s instead of 9 s: a killed leader's partitions move in seconds
FAST_FAILOVER = {"broker.session.timeout.ms": "3000", "broker.heartbeat.interval.ms": "500"}
# internal topics of 5 partitions instead of Kafka's 50, for clusters that test: a fresh 3-broker cluster's first
# consumer group and transaction take 0.35 of the CPU and 0.39 of the time, and a failover of the group's coordinator
# 0.66 of the CPU (benchmarks/small_internal_topics.py)
SMALL_INTERNAL_TOPICS = {"offsets.topic.num.partitions": "5", "transaction.state.log.num.partitions": "5",
                         "share.coordinator.state.topic.num.partitions": "5"}
# for clusters that test, which wait between tests more than they work: 2 request handler threads of Kafka's 8 and
# 1 network thread a listener of its 3, each waking every 0.3 s to find nothing, and the active controller's no-op
# metadata record (KIP-835, a liveness signal no test reads) every 5 s instead of every 0.5 s, which wakes every
# node. Idle, a 3 + 1 cluster needs ~0.65 of the CPU (benchmarks/idle_test_brokers.py)
QUIET_IDLE = {"num.io.threads": "2", "num.network.threads": "1", "metadata.max.idle.interval.ms": "5000"}
# the storage formatter runs for a second: no JIT tiers or big heap needed
FORMAT_JVM_OPTIONS = ["-Xmx256m", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC"]
NETWORKS = ("loopback", "isolated")
# a whole cluster going down: its nodes log their shutdown done within a second or so, but their JVMs take 3-6 s to
# exit (the quorum's last voters wait out a graceful resignation to voters that are gone); its data is never started
# from again (the next `up` formats afresh), so whatever still runs after this is killed. A node restarted on its
# data gets `stop_timeout_s`.
DOWN_GRACE_S = 1.0
# on an isolated network every node has an address of its own, so every node uses the same ports: the clients'
# listener (more client listeners follow it), the brokers' replication listener, and the KRaft quorum's
ISOLATED_CLIENT_PORT, ISOLATED_REPLICATION_PORT, ISOLATED_CONTROLLER_PORT = 9092, 9093, 9094
ISOLATED_EXTRA_PORTS_FROM = 9095
ISOLATED_METRICS_PORT = 9404  # the JMX exporter's, as its docs use
JMX_EXPORTER = "jmx_prometheus_javaagent"
JMX_EXPORTER_RULES = "jmx-exporter.yaml"  # shipped beside this module; copied into the cluster directory


class PortTaken(ClusterError):
    """A node exited at its start because a port it was given was taken."""


def default_cluster_dir() -> Path:
    return Path(os.environ.get("KAFKABENCH_CLUSTER_DIR") or Path(platformdirs.user_state_dir("kafkabench")) / "cluster")


def new_cluster_id() -> str:
    """A Kafka Uuid string; like Kafka's own, never starting with '-', which command lines read as an option."""
    while True:
        cluster_id = base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")
        if not cluster_id.startswith("-"):
            return cluster_id


class EmbeddedCluster:
    """Start, inspect, break and stop a local Kafka cluster.

    `with EmbeddedCluster(brokers=3) as cluster:` starts it and always stops it. `controllers=0` makes every
    node both broker and controller; `controllers=M` adds M controller-only nodes and makes the brokers
    brokers only. Nodes started by a library user die with the starting process; `detach=True` (the CLI's
    `cluster up`) lets them outlive it. `security` says what its client listeners are (plaintext by default;
    TLS, mTLS, SASL: see `cluster.listeners`); `connection` is how to get in. `network="isolated"` puts each node
    in a namespace of its own (root needed), brokers replicating over a listener apart from the clients'.
    """

    def __init__(
        self,
        brokers: int = 1,
        controllers: int = 0,
        directory: Path | None = None,
        broker_config_overrides: dict[str, str] | None = None,
        port: int | None = None,
        detach: bool = False,
        startup_timeout_s: float = 120,
        stop_timeout_s: float = 30,
        java: Java | None = None,
        jar_cache: JarCache | None = None,
        security: Security | None = None,
        network: str = "loopback",
        subnet: str | None = None,
        kafka_version: str | None = None,
        jvm_options: Sequence[str] = (),
    ) -> None:
        if network not in NETWORKS:
            raise ClusterError(f"--network {network}: must be one of {', '.join(NETWORKS)}")
        if subnet is not None and network != "isolated":
            raise ClusterError("--subnet applies to --network isolated")
        try:
            self.subnet = ipaddress.IPv4Network(subnet) if subnet is not None else None
        except ValueError:
            raise ClusterError(f"--subnet {subnet}: not an IPv4 network such as 10.213.7.0/24") from None
        port = ports.client_port(port, brokers)
        if network == "isolated" and port is not None:
            raise ClusterError("--port applies to a loopback cluster: on an isolated network every broker has an "
                               f"address of its own and clients use port {ISOLATED_CLIENT_PORT}")
        if brokers < 1:
            raise ClusterError(f"--brokers must be at least 1, got {brokers}")
        if controllers < 0:
            raise ClusterError(f"--controllers must be 0 (combined nodes) or more, got {controllers}")
        self.broker_count = brokers
        self.controller_count = controllers
        self.directory = Path(directory or default_cluster_dir()).resolve()
        self.overrides = broker_config_overrides or {}
        self.port = port
        self.detach = detach
        self.startup_timeout_s = startup_timeout_s
        self.stop_timeout_s = stop_timeout_s
        self._java = java
        self._jar_cache = jar_cache
        self.requested_version = kafka_version  # None: the pinned default (or the jar cache's)
        self.jvm_options = list(jvm_options)
        self.security = security or Security()
        self.network_mode = network
        self.network: IsolatedNetwork | None = None
        self.state: ClusterState | None = None
        self._processes: dict[int, BrokerProcess] = {}

    # ---- lifecycle -------------------------------------------------------------------------------

    @classmethod
    def attach(cls, directory: Path | None = None) -> EmbeddedCluster:
        """The cluster whose state file is in `directory`, started earlier by any process."""
        cluster = cls(directory=directory, detach=True)
        state = load_state(cluster.directory)
        if state is None:
            raise ClusterError(f"no embedded cluster in {cluster.directory}; start one with `kafkabench cluster up`")
        cluster.state = state
        cluster.security = state.security
        cluster.broker_count = len(state.brokers)
        cluster.controller_count = len(state.nodes) - len(state.brokers)
        cluster.network = IsolatedNetwork.of(state.network) if state.network else None
        cluster.network_mode = "isolated" if state.network else "loopback"
        cluster.overrides, cluster.jvm_options = dict(state.broker_settings), list(state.jvm_options)
        cluster._processes = {node.node_id: BrokerProcess(node) for node in state.nodes}
        return cluster

    def start(self) -> EmbeddedCluster:
        """Start every node and wait until the cluster takes a write. A node that lost one of its free ports before
        it bound it (another process took it meanwhile: the suite's workers start clusters side by side, and every
        client connection takes a port from the same range) is a race, not the user's error: the whole start is tried
        again on fresh ports, PORT_ATTEMPTS times at most; ports the user gave (--port) are not."""
        for attempt in range(1, PORT_ATTEMPTS + 1):
            try:
                return self._start_once()
            except PortTaken:
                if attempt == PORT_ATTEMPTS or self.port is not None or self.network_mode != "loopback":
                    raise
        raise AssertionError("unreachable")

    def _start_once(self) -> EmbeddedCluster:
        began, phases = time.monotonic(), {}

        def done(phase: str) -> None:
            phases[phase] = round(time.monotonic() - began, 3)

        self._refuse_if_running()
        java, jar_cache, classpath, formats_itself, sharing = self._runtime(self.requested_version)
        if self.network_mode == "isolated":
            self.network = IsolatedNetwork.create(self.broker_count + self.controller_count, self.subnet)
        try:
            layouts = self._prepare_directories()
            done("set up")
            cluster_id = new_cluster_id()
            recorders = self._first_of_each_role(layouts)  # of the classes the nodes load, for the archive
            if not formats_itself:
                self._format_storage(java, classpath, cluster_id, layouts, sharing)
                done("storage formatted")
            self.state = ClusterState(
                kafka_version=jar_cache.manifest.kafka_version,
                cluster_id=cluster_id,
                directory=self.directory,
                nodes=[self._node_state(java, classpath, jar_cache, layout, index, sharing,
                                        self._main(formats_itself, cluster_id, layout), records=layout in recorders)
                       for index, layout in enumerate(layouts, 1)],
                security=self.security,
                network=self.network.describe() if self.network else None,
                broker_settings=self.overrides,
                jvm_options=self.jvm_options,
            )
            listeners.write_client_properties(self.security, {mode: self.state.listener_bootstrap(mode)
                                                              for mode in self.security.listeners})
            self._processes = {node.node_id: BrokerProcess(node) for node in self.state.nodes}
            for process in self._processes.values():
                self._start_process(process)
            done("nodes started")
            save_state(self.state)  # written before waiting, so `cluster down` can always clean up
            self.wait_until_ready(self.startup_timeout_s, probe=False, starting=True)
            done("metadata served")
            self._probe_write(self.startup_timeout_s)
            done("write accepted")
            self.state.startup = phases
            save_state(self.state)
            sharing.build_from([layout.directory / CLASS_LIST for layout in recorders])
        except BaseException:
            self.stop()
            raise
        return self

    def _runtime(self, version: str | None) -> tuple[Java, JarCache, str, bool, ClassSharing]:
        """What the nodes of `version` run on: the JVM, the jar cache, the classpath (with kafkabench's node launcher
        when it compiles: each node then formats its own storage), whether they format themselves, class sharing."""
        java = self._java or find_java()
        jar_cache = self._jar_cache or JarCache(manifest=packaged_manifest(version))
        classpath = os.pathsep.join(str(jar) for jar in jar_cache.ensure())
        launcher = node_jar(java, classpath, jar_cache.directory)
        if launcher is not None:
            classpath = os.pathsep.join([classpath, str(launcher)])
        # the JMX exporter agent's jar too (the JVM puts it on the class path anyway): its classes are then in the
        # class-sharing archive with Kafka's. A 3 + 1 cluster's nodes started on 7.31 CPU-s against 7.77 without it
        # (0.94; medians of 5 interleaved starts, `node CPU` of benchmarks/cluster_startup.py)
        classpath = os.pathsep.join([classpath, str(jar_cache.agent(JMX_EXPORTER))])
        # SCRAM users are made by the formatter from passwords on its command line: not a node's, which lives on
        formats_itself = launcher is not None and not listeners.has_scram_users(self.security)
        return java, jar_cache, classpath, formats_itself, ClassSharing(java, classpath, jar_cache.directory)

    def add_broker(self, timeout_s: float | None = None) -> int:
        """A new broker joins the running cluster (loopback only): the next id, ports of its own, the cluster's
        settings and the newest release its brokers run, its storage formatted with the cluster's id; returns its id
        once it serves. It holds no partition until some are moved to it."""
        state = self._require_state()
        if self.network is not None:
            raise ClusterError("adding a broker to a cluster on an isolated network is not supported: its network "
                               "has an address per node, fixed when it started; use a loopback cluster")
        node_id = max(self.broker_ids()) + 1
        if node_id >= CONTROLLER_IDS_FROM:
            raise ClusterError(f"a cluster has at most {CONTROLLER_IDS_FROM - 1} brokers (ids from "
                               f"{CONTROLLER_IDS_FROM} are its controllers')")
        version = max((self.node_version(broker) for broker in self.broker_ids()), key=release)  # after an upgrade
        java, jar_cache, classpath, formats_itself, sharing = self._runtime(version)
        extra = len(self.security.listeners) - 1
        allocated = ports.free_ports(2 + extra)
        layout = NodeLayout(node_id, allocated[0], None, self.directory / f"node-{node_id}", BROKER,
                            dict(zip(self.security.listeners, [allocated[0], *allocated[2:]])),
                            metrics_port=allocated[1])
        layouts = [*(layout_of(node) for node in state.nodes), layout]
        layout.data_dir.mkdir(parents=True)
        listeners.write_private(layout.config_file,
                                broker_config.render_server_properties(layout, layouts, self.overrides, self.security))
        layout.log4j_file.write_text(broker_config.LOG4J2)
        if not formats_itself:
            self._format_storage(java, classpath, state.cluster_id, [layout], sharing)
        node = self._node_state(java, classpath, jar_cache, layout, len(state.nodes) + 1, sharing,
                                self._main(formats_itself, state.cluster_id, layout))
        node.kafka_version = None if version == state.kafka_version else version
        at = len(state.brokers)  # the brokers first, then the dedicated controllers, as the state file keeps them
        state.nodes.insert(at, node)
        self._processes[node_id] = BrokerProcess(node)
        self.broker_count += 1
        self._start_process(self._processes[node_id])
        save_state(state)
        self.wait_until_ready(timeout_s or self.startup_timeout_s, broker_ids=[node_id], probe=False)
        return node_id

    def check_routes(self) -> None:
        """On an isolated network: every node address still routes into the cluster's bridge (the machine's routes
        may have changed since it started), before a client sends there; ClusterError naming the first that does not."""
        if self.network is not None:
            check_routes_into([node.host for node in self._require_state().nodes], self.network.name)

    def _start_process(self, process: BrokerProcess) -> None:
        process.start(detach=self.detach)
        if self.network is not None:  # the network lasts as long as a node in it runs, whoever started the cluster
            self.network.add_owner(process.node.pid, process.node.started)

    def stop(self, timeout_s: float | None = None) -> None:
        """Graceful shutdown of every node within the timeout (DOWN_GRACE_S), then SIGKILL; nothing of ours is left
        running."""
        timeout = DOWN_GRACE_S if timeout_s is None else timeout_s
        self._adopt_restarts()
        # all at once: the controllers answer the brokers' controlled shutdown while they wait to resign
        processes = list(self._processes.values())
        with ThreadPoolExecutor(max(1, len(processes))) as pool:
            list(pool.map(lambda p: p.stop(timeout), processes))
        if self.state is not None:
            for node in self.state.nodes:
                node.pid = node.started = None
            clear_state(self.directory)
        if self.network is not None:
            self.network.remove()

    def __enter__(self) -> EmbeddedCluster:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # ---- what it is ------------------------------------------------------------------------------

    @property
    def bootstrap_servers(self) -> str:
        return self._require_state().bootstrap_servers

    @property
    def connection(self) -> Connection:
        """How a client gets in through the first listener (as user `bench` where SASL asks for a user)."""
        return self.listener_connection(self.security.primary)

    def listener_connection(self, mode: str) -> Connection:
        state = self._require_state()
        settings = listeners.client_settings(self.security, mode) if self.security.secrets_dir else {}
        return Connection.of(state.listener_bootstrap(mode), settings)

    @property
    def kafka_version(self) -> str:
        return self._require_state().kafka_version

    @property
    def layout(self) -> str:
        return self._require_state().layout

    def broker_ids(self) -> list[int]:
        return [node.node_id for node in self._require_state().brokers]

    def controller_ids(self) -> list[int]:
        """The quorum's voters: every node when they are combined, else the controller-only nodes."""
        return [node.node_id for node in self._require_state().controllers]

    def node_ids(self) -> list[int]:
        return [node.node_id for node in self._require_state().nodes]

    def log_file(self, broker_id: int) -> Path:
        return self._process(broker_id).log_file

    def status(self) -> ClusterStatus:
        self._adopt_restarts()
        state = self._require_state()
        return ClusterStatus(
            bootstrap_servers=state.bootstrap_servers,
            kafka_version=state.kafka_version,
            cluster_id=state.cluster_id,
            directory=str(state.directory),
            layout=state.layout,
            brokers=[self._node_status(node) for node in state.brokers],
            controllers=[self._node_status(node) for node in state.nodes if node.port is None],
            security=security_status(state),
            network=state.network,
            broker_settings=state.broker_settings,
            jvm_options=state.jvm_options,
        )

    def _node_status(self, node: NodeState) -> BrokerStatus:
        process = self._processes[node.node_id]
        state = process.state()
        return BrokerStatus(id=node.node_id, pid=node.pid, port=node.port, host=node.host,
                            controller_port=node.controller_port,
                            metrics=f"{node.host}:{node.metrics_port}" if node.metrics_port else None,
                            roles=node.roles, alive=state != "dead", state=state, log=str(process.log_file))

    def leader_of(self, topic: str, partition: int = 0) -> int | None:
        """The partition's leader now, None while it has none. A topic created a moment ago may not have reached the
        broker asked yet (each broker learns it from the controller in its own time): it is asked again, for up
        to KNOWN_TOPIC_S."""
        def described():
            try:
                return admin.describe_topic(topic)
            except KafkaAdminError as exc:
                if "Unknown topic" not in str(exc):
                    raise
                return None

        with KafkaAdmin(self.connection.at(self.live_bootstrap_servers()), timeout_s=10) as admin:
            info = wait_until(described, timeout_s=KNOWN_TOPIC_S, what=f"topic {topic} in the metadata", interval_s=0.2)
        for p in info.partitions:
            if p.partition == partition:
                return p.leader
        raise ClusterError(f"topic {topic} has no partition {partition}")

    # ---- faults ----------------------------------------------------------------------------------

    def kill_broker(self, broker_id: int) -> None:
        """kill -9: no shutdown hooks, no controlled leadership hand-over."""
        process = self._process(broker_id)
        if process.process() is None:
            raise ClusterError(f"broker {broker_id} is not running")
        process.kill()

    def pause_broker(self, broker_id: int) -> None:
        """SIGSTOP: the process holds its sockets but answers nothing, like a long GC pause or a hung host."""
        process = self._process(broker_id)
        process.signal(signal.SIGSTOP)
        process.wait_paused()

    def resume_broker(self, broker_id: int) -> None:
        self._process(broker_id).signal(signal.SIGCONT)

    def stop_broker(self, broker_id: int) -> None:
        """A clean shutdown (SIGTERM: leaderships handed over first), killed after `stop_timeout_s`; it stays down
        until restarted."""
        process = self._process(broker_id)
        if process.process() is None:
            raise ClusterError(f"broker {broker_id} is not running")
        process.stop(self.stop_timeout_s)

    def restart_broker(self, broker_id: int, timeout_s: float | None = None) -> None:
        self.restart_nodes([broker_id], timeout_s)

    def restart_nodes(self, node_ids: list[int], timeout_s: float | None = None) -> None:
        """Stop each node gracefully if it runs (kill at the deadline), start them together on the same ports
        and data, and wait until every broker serves metadata listing every live node, itself included (it
        is unfenced); a controller is back once it takes connections and every broker serves again."""
        timeout_s = timeout_s or self.startup_timeout_s
        processes = [self._process(node_id) for node_id in node_ids]
        for process in processes:
            process.stop(self.stop_timeout_s)
        for process in processes:
            self._start_process(process)
        save_state(self._require_state())
        brokers = [node_id for node_id in node_ids if node_id in self.broker_ids()]
        for process in processes:
            if process.node.node_id not in brokers:
                def listening(process=process) -> bool:
                    self._raise_if_died(process.node.node_id)
                    return ports.accepts(process.node.controller_port, process.node.host)

                wait_until(listening, timeout_s=timeout_s, what=f"controller {process.node.node_id} to listen",
                           hint=f"see its log {process.log_file}", interval_s=0.2)
        self.wait_until_ready(timeout_s, broker_ids=brokers if len(brokers) == len(node_ids) else None, probe=False)

    def restart_on(self, node_id: int, version: str, timeout_s: float | None = None) -> None:
        """Restart a node on another pinned Kafka release (its jars fetched if need be), on the same data, settings
        and ports: one step of a rolling upgrade. Its storage is formatted already, so it starts as `kafka.Kafka`;
        the class-sharing archive, made for the cluster's release, is left out."""
        jar_cache = JarCache(manifest=packaged_manifest(version))
        classpath = os.pathsep.join(str(jar) for jar in jar_cache.ensure())
        node = self._require_state().node(node_id)
        node.command = on_release(node.command, classpath, str(jar_cache.agent(JMX_EXPORTER)))
        node.kafka_version = None if version == self._require_state().kafka_version else version
        self.restart_nodes([node_id], timeout_s)

    def node_version(self, node_id: int) -> str:
        """The Kafka release node `node_id` runs."""
        state = self._require_state()
        return state.node(node_id).kafka_version or state.kafka_version

    # ---- readiness -------------------------------------------------------------------------------

    def wait_until_ready(self, timeout_s: float, broker_ids: list[int] | None = None, probe: bool = True,
                         starting: bool = False) -> None:
        """Each awaited node answers metadata on its own listener listing every live node, and, if
        `probe`, a replicated probe topic takes an acks=all write. Asking each node itself matters: the
        others keep listing a killed node until its session times out. `starting`: every node must live (a
        controller that exits, say formatting its storage, is named at once rather than waited for)."""
        pending = set(broker_ids or self.broker_ids())

        def all_answer() -> bool:
            for node_id in self.node_ids() if starting else sorted(pending):
                self._raise_if_died(node_id)
            live = {bid for bid in self.broker_ids() if self._processes[bid].state() != "dead"}
            for broker_id in sorted(pending):
                if self._metadata_from(broker_id) >= live:
                    pending.discard(broker_id)
            return not pending

        wait_until(all_answer, timeout_s=timeout_s, what=f"broker(s) {', '.join(map(str, sorted(pending)))} to serve metadata",
                   hint=f"see the broker logs in {self.directory}", interval_s=0.2)
        if probe:
            self._probe_write(timeout_s)

    def _metadata_from(self, broker_id: int) -> set[int]:
        """The brokers `broker_id` lists; none while it does not yet accept connections (a broker opens its
        listener last), asked of the socket so a client does not wait out its timeout on a closed port."""
        node = self._require_state().node(broker_id)
        if not ports.accepts(node.port, node.host, timeout_s=0.5):
            return set()
        try:
            with KafkaAdmin(self.connection.at(node.address), timeout_s=2) as admin:
                return set(admin.brokers(timeout_s=2))
        except KafkaAdminError:
            return set()

    def _probe_write(self, timeout_s: float) -> None:
        with KafkaAdmin(self.connection, timeout_s=timeout_s) as admin:
            try:
                admin.create_topic(PROBE_TOPIC, partitions=1, replication_factor=min(3, self.broker_count))
            except KafkaAdminError as exc:
                if "already exists" not in str(exc):
                    raise
        producer = Producer(quiet_client_config(self.connection, acks="all", **{"message.timeout.ms": int(timeout_s * 1000)}))
        errors: list[str] = []
        producer.produce(PROBE_TOPIC, b"ready", on_delivery=lambda err, _msg: err and errors.append(err.str()))
        if producer.flush(timeout_s) > 0 or errors:
            raise ClusterError(f"the cluster did not accept a probe write within {timeout_s:g} s: {errors or 'no ack'}; see logs in {self.directory}")

    def _raise_if_died(self, broker_id: int) -> None:
        process = self._processes[broker_id]
        if process.process() is None:
            role = "broker" if process.node.port is not None else "controller"
            lines = process.log_tail()
            died = PortTaken if any("Address already in use" in line for line in lines) else ClusterError
            raise died(f"{role} {broker_id} exited during startup: {_diagnose(lines)}; full log: {process.log_file}")

    # ---- set-up ----------------------------------------------------------------------------------

    def _refuse_if_running(self) -> None:
        existing = load_state(self.directory)
        if existing is None:
            return
        if any(BrokerProcess(node).process() is not None for node in existing.nodes):
            raise ClusterError(
                f"a cluster is already running in {self.directory} ({existing.bootstrap_servers}); "
                "use it, or stop it first with `kafkabench cluster down`"
            )
        if existing.network:  # stale: its processes are gone, and so is its network's reason to be
            IsolatedNetwork.of(existing.network).remove()
        clear_state(self.directory)

    def _prepare_directories(self) -> list[NodeLayout]:
        self.directory.mkdir(parents=True, exist_ok=True)
        for old in self.directory.glob("node-*"):
            shutil.rmtree(old)  # only what an earlier cluster of ours left here
        (self.directory / JMX_EXPORTER_RULES).write_text(
            resources.files("kafkabench.cluster").joinpath(JMX_EXPORTER_RULES).read_text())
        layouts = self._isolated_layouts() if self.network is not None else self._loopback_layouts()
        for layout in layouts:
            layout.data_dir.mkdir(parents=True)
            # owner-only: a secured broker's settings hold the JAAS text with its password
            listeners.write_private(layout.config_file,
                                    broker_config.render_server_properties(layout, layouts, self.overrides, self.security))
            layout.log4j_file.write_text(broker_config.LOG4J2)
        return layouts

    def _node_ids(self) -> list[tuple[int, str]]:
        """Each node's id and roles: brokers 1..N, then the dedicated controllers."""
        if not self.controller_count:
            return [(i, COMBINED) for i in range(1, self.broker_count + 1)]
        return [(i, BROKER) for i in range(1, self.broker_count + 1)] + \
            [(i, CONTROLLER) for i in range(CONTROLLER_IDS_FROM, CONTROLLER_IDS_FROM + self.controller_count)]

    def _loopback_layouts(self) -> list[NodeLayout]:
        """Every node on 127.0.0.1, each port its own: free ports, or the clients' from `port` on."""
        brokers, controllers = self.broker_count, self.controller_count
        quorum_ports = brokers if not controllers else controllers
        extra = len(self.security.listeners) - 1  # more client listeners than the first, each on a port of its own
        if self.port is not None:
            client_ports = [self.port + i for i in range(brokers)]
            for port in client_ports:
                ports.require_free(port)
            others = [p for p in ports.free_ports(brokers * extra + quorum_ports) if p not in client_ports]
            controller_ports, extra_ports = others[:quorum_ports], others[quorum_ports:]
        else:
            allocated = ports.free_ports(brokers * (1 + extra) + quorum_ports)
            client_ports, controller_ports = allocated[:brokers], allocated[brokers:brokers + quorum_ports]
            extra_ports = allocated[brokers + quorum_ports:]
        metrics_ports = [p for p in ports.free_ports(len(self._node_ids()) + brokers * (1 + extra) + quorum_ports)
                         if p not in client_ports + controller_ports + extra_ports][:len(self._node_ids())]
        listener_ports = [dict(zip(self.security.listeners, [client_ports[i], *extra_ports[i * extra:(i + 1) * extra]]))
                          for i in range(brokers)]
        self.security = listeners.prepare_secrets(self.security, self.directory)
        controller_ports = iter(controller_ports)
        return [NodeLayout(node_id, client_ports[i] if roles != CONTROLLER else None,
                           next(controller_ports) if roles != BROKER else None, self.directory / f"node-{node_id}", roles,
                           listener_ports[i] if roles != CONTROLLER else {}, metrics_port=metrics_ports[i])
                for i, (node_id, roles) in enumerate(self._node_ids())]

    def _isolated_layouts(self) -> list[NodeLayout]:
        """Node i of the network at its own address, every node on the same ports; the brokers' certificates name
        their addresses too."""
        assert self.network is not None
        hosts = [self.network.address(index) for index in range(1, len(self._node_ids()) + 1)]
        if self.security.uses_tls:
            self.security = self.security.model_copy(
                update={"certificate_hosts": [*self.security.certificate_hosts, *hosts]})
        self.security = listeners.prepare_secrets(self.security, self.directory)
        client_ports = [ISOLATED_CLIENT_PORT, *range(ISOLATED_EXTRA_PORTS_FROM,
                                                     ISOLATED_EXTRA_PORTS_FROM + len(self.security.listeners) - 1)]
        listener_ports = dict(zip(self.security.listeners, client_ports))
        return [NodeLayout(node_id, ISOLATED_CLIENT_PORT if roles != CONTROLLER else None,
                           ISOLATED_CONTROLLER_PORT if roles != BROKER else None, self.directory / f"node-{node_id}",
                           roles, listener_ports if roles != CONTROLLER else {}, host=host,
                           replication_port=ISOLATED_REPLICATION_PORT if roles != CONTROLLER else None,
                           metrics_port=ISOLATED_METRICS_PORT)
                for (node_id, roles), host in zip(self._node_ids(), hosts)]

    def _format_storage(self, java: Java, classpath: str, cluster_id: str, layouts: list[NodeLayout],
                        sharing: ClassSharing) -> None:
        def format_one(layout: NodeLayout) -> None:
            command = [str(java.executable), *FORMAT_JVM_OPTIONS, *sharing.options(), f"-Dlog4j2.configurationFile={layout.log4j_file}",
                       "-cp", classpath, "kafka.tools.StorageTool", *self._format_arguments(cluster_id, layout)]
            with layout.log_file.open("ab") as log:
                try:
                    done = subprocess.run(command, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, timeout=120)
                except subprocess.TimeoutExpired as exc:
                    raise ClusterError(f"formatting the storage of broker {layout.node_id} took over 120 s; log: {layout.log_file}") from exc
            if done.returncode != 0:
                tail = layout.log_file.read_text(errors="replace").splitlines()
                raise ClusterError(f"formatting the storage of broker {layout.node_id} failed: {_diagnose(tail)}; full log: {layout.log_file}")

        with ThreadPoolExecutor(len(layouts)) as pool:
            list(pool.map(format_one, layouts))

    def _format_arguments(self, cluster_id: str, layout: NodeLayout) -> list[str]:
        return ["format", f"--cluster-id={cluster_id}", "--config", str(layout.config_file),
                *listeners.scram_arguments(self.security)]

    def _main(self, formats_itself: bool, cluster_id: str, layout: NodeLayout) -> list[str]:
        """The node's main class and arguments: kafkabench's, formatting the storage first (a restart finds it
        formatted), or Kafka's, on storage formatted before."""
        if formats_itself:
            return [MAIN_CLASS, *self._format_arguments(cluster_id, layout), "--ignore-formatted", "--", str(layout.config_file)]
        return ["kafka.Kafka", str(layout.config_file)]

    @staticmethod
    def _first_of_each_role(layouts: list[NodeLayout]) -> list[NodeLayout]:
        """The first node of each kind the cluster has (combined, or a broker and a dedicated controller): between
        them they load every class a node of this cluster does."""
        return list({layout.roles: layout for layout in reversed(layouts)}.values())

    def _node_state(self, java: Java, classpath: str, jar_cache: JarCache, layout: NodeLayout, index: int,
                    sharing: ClassSharing, main: list[str], records: bool = False) -> NodeState:
        """Node `layout`, the `index`th of the cluster (its place on an isolated network), with the JMX exporter agent
        serving its metrics on its metrics port; one that `records` lists the classes it loads while there is no
        archive."""
        rules = self.directory / JMX_EXPORTER_RULES
        agent = f"-javaagent:{jar_cache.agent(JMX_EXPORTER)}={layout.host}:{layout.metrics_port}:{rules}"
        sharing_options = sharing.options(record_to=layout.directory / CLASS_LIST if records else None)
        command = [str(java.executable), *JVM_OPTIONS, *sharing_options, *self.jvm_options, agent, f"-Dlog4j2.configurationFile={layout.log4j_file}",
                   f"-Dkafka.logs.dir={layout.directory}", "-cp", classpath, *main]
        namespace = self.network.namespace(index) if self.network is not None else None
        if self.network is not None:
            command = [*self.network.exec_prefix(index), *command]  # `ip netns exec` execs: the pid is the JVM's
        return NodeState(node_id=layout.node_id, port=layout.port, controller_port=layout.controller_port,
                         directory=layout.directory, command=command, roles=layout.roles,
                         listener_ports=layout.listener_ports, host=layout.host, namespace=namespace,
                         metrics_port=layout.metrics_port)

    # ---- helpers ---------------------------------------------------------------------------------

    def _adopt_restarts(self) -> None:
        """Nodes another process restarted (a lab attached to this cluster brings back a broker it killed) are
        in the state file under their new pids: take them over, so they are seen and stopped like our own. Only a
        process started after ours: while this process restarts a node (in memory at once, in the file once every
        node it restarts is up), the file still names the process it replaced, which must not be taken back (a
        status asked meanwhile from another thread did, and lost the new process: killed nodes were not killed and
        their restarts found their ports taken)."""
        saved = load_state(self.directory) if self.state is not None else None
        if saved is None or saved.cluster_id != self.state.cluster_id:
            return
        for node in saved.nodes:
            mine = self.state.node(node.node_id)
            if started_later(node, mine):
                mine.pid, mine.started = node.pid, node.started
                self._processes[node.node_id] = BrokerProcess(mine)

    def _require_state(self) -> ClusterState:
        if self.state is None:
            raise ClusterError("the cluster is not started")
        return self.state

    def _process(self, broker_id: int) -> BrokerProcess:
        self._require_state().node(broker_id)  # a clear error for an unknown id
        return self._processes[broker_id]

    def live_bootstrap_servers(self) -> str:
        """Bootstrap through brokers that are running, so a killed node does not stall admin calls."""
        state = self._require_state()
        live = [n.address for n in state.brokers if self._processes[n.node_id].state() == "running"]
        return ",".join(live) or state.bootstrap_servers


def layout_of(node: NodeState) -> NodeLayout:
    """A running node's layout as its state keeps it (loopback: no replication listener of its own)."""
    return NodeLayout(node.node_id, node.port, node.controller_port, node.directory, node.roles,
                      dict(node.listener_ports), host=node.host, metrics_port=node.metrics_port)


def on_release(command: list[str], classpath: str, agent: str) -> list[str]:
    """A node's command run on another release: its classpath and JMX exporter agent that release's, no class-sharing
    archive (made for the other classpath), and Kafka's own main class on the config file (the storage is
    formatted: kafkabench's node launcher, which formats first, is not needed)."""
    at = command.index("-cp")
    options = [option if not option.startswith("-javaagent:") else
               f"-javaagent:{agent}={option.split('=', 1)[1]}" for option in command[:at]
               if not option.startswith(("-XX:SharedArchiveFile=", "-XX:DumpLoadedClassList="))]
    return [*options, "-cp", classpath, "kafka.Kafka", command[-1]]


def started_later(saved: NodeState, mine: NodeState) -> bool:
    """Whether the state file's process of a node is another than ours and started after it (ours may be a restart
    the file does not name yet, and the one it names the process that restart replaced)."""
    if saved.pid is None or (saved.pid, saved.started) == (mine.pid, mine.started):
        return False
    return mine.started is None or (saved.started is not None and saved.started > mine.started)


def _diagnose(lines: list[str]) -> str:
    """The most telling line of a failed JVM's output: the last error, else the last line."""
    for line in reversed(lines):
        if "Address already in use" in line:
            return "a port is already in use (Address already in use); pick another with --port"
    for line in reversed(lines):
        if " ERROR " in line or "Exception" in line or line.startswith("Error"):
            return line.strip()[:300]
    return lines[-1].strip()[:300] if lines else "no output"

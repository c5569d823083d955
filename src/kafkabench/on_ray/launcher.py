"""Workers on a Ray cluster: `--launcher ray --ray-address ADDR`.

Each worker is a Ray actor (on_ray.host.WorkerHost) that owns the worker process on its node and relays its
protocol lines; the labs talk to it exactly as to a local worker (core.launcher.Worker). A run's workers are
placed all at once or not at all (`reserve`): a placement group of slots on nodes that offer the `kafkabench`
resource, one slot per node (STRICT_SPREAD) or packed (`--spread pack`); producer i and consumer i share slot i.
Files travel through the object store, checked by hash both ways. Each worker's node clocks are compared with
this process's when it starts (the lowest round trip of many UDP pings, on_ray.clock): the offset and its bound are
recorded, and the worker is told the offset, so every time it reports or stamps is on this process's monotonic clock.
"""

from __future__ import annotations

import contextlib
import os
import queue
import threading
import time
import uuid
from dataclasses import dataclass
from functools import partial
from pathlib import Path

from pydantic import BaseModel

from kafkabench.core import protocol
from kafkabench.core.protocol import Error, Outcome, Progress, Task
from kafkabench.core.worker_process import WorkerFailed, stop_all
from kafkabench.errors import ConfigError, KafkabenchError
from kafkabench.on_ray.clock import Clock, UdpClockReader
from kafkabench.on_ray.host import WorkerHost, sha256_of
from kafkabench.on_ray.local_access import DriverAccess

RESOURCE = "kafkabench"  # what a node offers to take kafkabench workers (`ray start --resources '{"kafkabench": 1}'`)
SPREADS = {"spread": "STRICT_SPREAD", "pack": "PACK"}
READ_WAIT_S = 0.2  # how long one relay call waits on the node for the worker's next line
CALL_TIMEOUT_S = 30  # a node that answers no call for this long is taken for gone
ACTOR_START_S = 120  # its first call waits for the actor's process, which a busy node may take long to start
SET_UP_S = ACTOR_START_S + 4 * CALL_TIMEOUT_S  # a worker's whole set-up: its actor, files, clock and process


@dataclass(frozen=True)
class _Slot:
    group: object  # a placement group
    index: int  # its bundle


class RayLauncher:
    """core.launcher.WorkerLauncher on a Ray cluster; a context: connected on entry, on exit every worker stopped,
    every file it shared removed from the nodes, its placement groups removed and the connection closed."""

    name = "ray"

    def __init__(self, address: str | None = None, spread: str = "spread", place_timeout_s: float = 30,
                 pairs_by_node: bool = True) -> None:
        if spread not in SPREADS:
            raise ConfigError(f"--spread {spread}: expected one of {', '.join(SPREADS)}")
        self.address = address or os.environ.get("RAY_ADDRESS")
        if not self.address:
            raise ConfigError("--launcher ray needs --ray-address HOST:PORT (or RAY_ADDRESS); try `kafkabench ray up`")
        self.spread = spread
        self.place_timeout_s = place_timeout_s
        self.pairs_by_node = pairs_by_node  # else --cross-host-e2e
        self.files_root = f"/tmp/kafkabench-ray-{uuid.uuid4().hex[:12]}"  # on each node, removed at the end
        self._files: dict[str, tuple[object, str]] = {}  # node path -> (object ref, sha256)
        self._dirs: set[str] = set()
        self._slots: list[_Slot] = []  # the latest reservation's
        self._turn = 0  # the slot the next worker takes, modulo their number
        self.workers: list[RayWorker] = []  # alive, or stopped with their actor kept (`collect` reads through it)
        self._java: list[str] | None = None  # the Java worker's command on a node, once its jars are shared

    # ---- the connection ------------------------------------------------------------------------------

    def __enter__(self) -> RayLauncher:
        """Connected; to a cluster `kafkabench ray up` started, with its token (on_ray.local_access)."""
        import ray

        os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
        self._access = DriverAccess(self.address)
        try:
            self._access.connect(partial(ray.init, logging_level="ERROR", log_to_driver=False, configure_logging=False))
        except (ConnectionError, RuntimeError, ValueError) as exc:
            raise KafkabenchError(f"Ray at {self.address}: cannot connect ({str(exc).splitlines()[0]}); is it "
                                  "running? (`kafkabench ray up` starts one here)") from None
        return self

    def __exit__(self, *exc_info) -> None:
        import ray

        for group in {id(w.group): w.group for w in self.workers}.values():
            self._retire([w for w in self.workers if w.group is group], group)
        for group in {id(slot.group): slot.group for slot in self._slots}.values():  # reserved, never used
            self._retire([], group)
        ray.shutdown()
        self._access.close()

    # ---- placing and starting workers ----------------------------------------------------------------

    def reserve(self, count: int) -> None:
        """Place the run's next workers on `count` slots now, all or none: a placement group of `count` bundles,
        one per node (STRICT_SPREAD) or packed. The workers started after take the slots in turn, so a run that
        starts n consumers, then n producers, has producer i and consumer i side by side. Slots of an earlier
        reservation whose workers have all stopped are given back first."""
        import ray
        from ray.util.placement_group import placement_group, remove_placement_group

        self._retire_stopped()
        share = 1 if self.spread == "spread" else 0.001
        group = placement_group([{RESOURCE: share}] * count, strategy=SPREADS[self.spread])
        if not group.wait(timeout_seconds=self.place_timeout_s):
            remove_placement_group(group)
            nodes = [n for n in ray.nodes() if n["Alive"] and n["Resources"].get(RESOURCE, 0) >= share]
            how = "one per node" if self.spread == "spread" else "packed"
            raise KafkabenchError(
                f"cannot place {count} worker slot(s) ({how}) within {self.place_timeout_s:g} s: Ray at {self.address} "
                f"has {len(nodes)} node(s) offering the {RESOURCE!r} resource, none placed; "
                + ("start more (`kafkabench ray up --nodes N`) or pack them (--spread pack)" if self.spread == "spread"
                   else "start one (`ray start --resources '{\"kafkabench\": 1}'`)"))
        self._slots = [_Slot(group, index) for index in range(count)]
        self._turn = 0

    def start(self, name: str, client: str) -> RayWorker:
        import ray
        from ray.util.scheduling_strategies import PlacementGroupSchedulingStrategy

        if client == "java" and not self.pairs_by_node:
            raise ConfigError("--cross-host-e2e with the java client: the Java worker stamps records on its own "
                              "node's clock, so e2e across nodes would carry their offset; drop --cross-host-e2e")
        command = self._java_command() if client == "java" else None
        if not self._slots:
            self.reserve(1)
        slot = self._slots[self._turn % len(self._slots)]
        self._turn += 1
        actor = ray.remote(WorkerHost).options(
            num_cpus=0, max_concurrency=4,
            scheduling_strategy=PlacementGroupSchedulingStrategy(slot.group, placement_group_bundle_index=slot.index))
        worker = RayWorker(name, actor.remote(), slot.group, shifts_itself=client != "java")
        worker.set_up(lambda host: self._set_up(host, client, command))
        self.workers.append(worker)
        return worker

    def _set_up(self, host, client: str, command: list[str] | None) -> tuple[str, str, Clock, int]:
        """On a worker's own thread (a run's workers start side by side): its actor's node, the files shared so
        far, the node's clock, then the worker process; (node id, address, clock, pid)."""
        import ray

        node, address = ray.get(host.node.remote(), timeout=ACTOR_START_S)
        for path in sorted(self._dirs):
            ray.get(host.make_dir.remote(path), timeout=CALL_TIMEOUT_S)
        for path, (ref, sha) in list(self._files.items()):
            ray.get(host.put_file.remote(path, ref, sha), timeout=CALL_TIMEOUT_S)
        clock = _measure_clock(host, address)
        pid = ray.get(host.start.remote(client, command), timeout=CALL_TIMEOUT_S)
        return node, address, clock, pid

    def _java_command(self) -> list[str]:
        """The Java worker on a node: its jar (built here) and the Kafka client jars shared, so the node needs only
        a JRE (`java` on its PATH)."""
        if self._java is None:
            from kafkabench.cluster.artifacts import JarCache
            from kafkabench.cluster.java import find_java
            from kafkabench.workers.java_build import MAIN_CLASS, jvm_flags, worker_jar

            jars = JarCache().ensure()
            classpath = [self.share(jar) for jar in (*jars, worker_jar(find_java(), jars))]
            self._java = ["java", *jvm_flags(), "-cp", ":".join(classpath), MAIN_CLASS]
        return self._java

    def _retire_stopped(self) -> None:
        """Actors and placement groups whose workers have all stopped: their files removed, then gone."""
        for group in {id(w.group): w.group for w in self.workers}.values():
            mine = [w for w in self.workers if w.group is group]
            if all(w.stopped for w in mine):
                self._retire(mine, group)

    def _retire(self, workers: list[RayWorker], group) -> None:
        import ray
        from ray.util.placement_group import remove_placement_group

        stop_all(workers)
        if workers:  # the nodes' files removed in one wait: a dead node's call takes a while to fail
            removals = []
            for worker in workers:
                with contextlib.suppress(Exception):
                    removals.append(worker.host.remove_dir.remote(self.files_root))
            with contextlib.suppress(Exception):
                ray.wait(removals, num_returns=len(removals), timeout=10)
        for worker in workers:
            with contextlib.suppress(Exception):
                ray.kill(worker.host)
            self.workers.remove(worker)
        with contextlib.suppress(Exception):
            remove_placement_group(group)
        self._slots = [slot for slot in self._slots if slot.group is not group]

    # ---- files ---------------------------------------------------------------------------------------

    def share(self, path: Path) -> str:
        """A file goes to every node a worker runs on (those started later too); a directory is made there, for a
        worker's outputs (`collect` brings them back)."""
        import ray

        path = Path(path).resolve()
        if path.is_dir():
            node_path = f"{self.files_root}/dirs/{sha256_of(str(path).encode())[:16]}/{path.name}"
            self._dirs.add(node_path)
            for worker in self._set_up_workers():
                ray.get(worker.host.make_dir.remote(node_path), timeout=CALL_TIMEOUT_S)
            return node_path
        data = path.read_bytes()
        sha = sha256_of(data)
        node_path = f"{self.files_root}/files/{sha[:16]}/{path.name}"
        if node_path not in self._files:
            self._files[node_path] = (ray.put(data), sha)
            for worker in self._set_up_workers():
                ray.get(worker.host.put_file.remote(node_path, self._files[node_path][0], sha), timeout=CALL_TIMEOUT_S)
        return node_path

    def _set_up_workers(self) -> list[RayWorker]:
        """The workers whose set-up ended (a file shared meanwhile could be missed by one still starting)."""
        return [worker for worker in self.workers if worker.wait_set_up()]

    def collect(self, path: Path) -> None:
        """Bring back into `path` what the workers wrote into the directory shared as `path`, checked by hash."""
        import ray

        node_path = self.share(path)
        for worker in self._set_up_workers():
            for name, (data, sha) in ray.get(worker.host.files_under.remote(node_path), timeout=CALL_TIMEOUT_S).items():
                if sha256_of(data) != sha:
                    raise KafkabenchError(f"{worker.name}: {name} came back with another sha256 than it had on its node")
                target = Path(path) / name
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(data)


class RayWorker:
    """One worker on a Ray node, as a lab sees a worker: protocol messages in and out, every wait bounded; the times
    it reports are on this process's monotonic clock."""

    def __init__(self, name: str, host, group, shifts_itself: bool = True) -> None:
        self.name = name
        self.shifts_itself = shifts_itself  # the Python worker takes the offset; the Java worker's times are moved here
        self.host = host
        self.group = group
        self.node = self.address = ""
        self.clock = Clock(0, 0, 0)  # until its node's is read
        self.pid: int | None = None
        self.started_ns = time.monotonic_ns()
        self._lines: queue.Queue[str | None] = queue.Queue()
        self._gone: str | None = None  # why the relay ended, when it did not end with the worker's output
        self._gone_kind = "failure"
        self._stopping = threading.Event()
        self._set_up_lock = threading.Lock()  # what is sent before the worker runs waits in _pending, in order
        self._pending: list[BaseModel] | None = []  # None once the worker runs
        self._set_up_ended = threading.Event()

    def set_up(self, set_up) -> None:
        """Start the worker on a thread of its own: `set_up(host)` gives (node, address, clock, pid); what is sent
        meanwhile is written once it runs, and a failure is the worker's first message."""
        threading.Thread(target=self._set_up, args=(set_up,), name=f"start {self.name}", daemon=True).start()

    def wait_set_up(self, timeout_s: float = SET_UP_S) -> bool:
        """True once the worker runs (or ran); False if it never started."""
        return self._set_up_ended.wait(timeout_s) and self.pid is not None

    def _set_up(self, set_up) -> None:
        import ray

        try:
            self.node, self.address, self.clock, self.pid = set_up(self.host)
            with self._set_up_lock:
                for message in self._pending:
                    self._write(message)
                self._pending = None
        except Exception as exc:
            self._gone = exc.reason if isinstance(exc, WorkerFailed) else f"could not start on Ray ({_first_line(exc)})"
            self._gone_kind = "config" if self.pid is None else "failure"
            with contextlib.suppress(Exception):
                if ray.is_initialized():  # else ray.kill would start a Ray of its own
                    ray.kill(self.host)
            self._lines.put(None)
            return
        finally:
            self._set_up_ended.set()
        threading.Thread(target=self._relay, name=f"relay {self.name}", daemon=True).start()

    @property
    def placement(self) -> dict:
        if not self.wait_set_up():
            return {"launcher": "ray", "node": self.node, "pid": None}  # never started: no clock was read
        return {"launcher": "ray", "node": self.node, "address": self.address, "pid": self.pid,
                "clock_offset_ns": self.clock.monotonic_offset_ns, "wall_clock_offset_ns": self.clock.wall_offset_ns,
                "clock_bound_ns": self.clock.bound_ns, "clock_via": self.clock.via}

    def send(self, message: BaseModel) -> None:
        with self._set_up_lock:
            if self._pending is not None:
                self._pending.append(message)
                return
        self._write(message)

    def _write(self, message: BaseModel) -> None:
        import ray

        if isinstance(message, Task) and self.shifts_itself:  # every time it reports and stamps, on this process's clock
            message = message.model_copy(update={"clock_offset_ns": -self.clock.monotonic_offset_ns})
        try:
            written = ray.get(self.host.write.remote(protocol.encode(message)), timeout=CALL_TIMEOUT_S)
        except Exception as exc:
            raise WorkerFailed(self.name, self._died(exc)) from None
        if not written:
            raise WorkerFailed(self.name, self._ended("worker is gone"))

    def receive(self, expected: type, timeout_s: float):
        message = self.next_message(timeout_s)
        if message is None:
            raise WorkerFailed(self.name, f"worker said nothing for {timeout_s:g} s", kind="timeout")
        if not isinstance(message, expected):
            raise WorkerFailed(self.name, f"worker sent {message.type!r} where {expected.__name__.lower()!r} was due")
        return message

    def next_message(self, timeout_s: float) -> BaseModel | None:
        try:
            line = self._lines.get(timeout=timeout_s) if timeout_s > 0 else self._lines.get_nowait()
        except queue.Empty:
            return None
        if line is None:
            self._lines.put(None)
            raise WorkerFailed(self.name, self._gone or self._ended("worker exited"), kind=self._gone_kind)
        message = protocol.decode(line)
        if not self.shifts_itself:
            message = on_driver_clock(message, -self.clock.monotonic_offset_ns)
        if isinstance(message, Error):
            raise WorkerFailed(self.name, message.message, kind=message.kind, partial=message.partial)
        return message

    def wait_exit(self, timeout_s: float) -> int | None:
        import ray

        try:
            return ray.get(self.host.exit_code.remote(timeout_s), timeout=timeout_s + CALL_TIMEOUT_S)
        except Exception:
            return None

    @property
    def stopped(self) -> bool:
        return self._stopping.is_set()

    def stop(self, timeout_s: float = 10) -> None:
        import ray

        if self.stopped:
            return
        self._stopping.set()
        self._set_up_ended.wait(SET_UP_S)  # else its process could start after this
        with contextlib.suppress(Exception):
            ray.get(self.host.stop.remote(timeout_s), timeout=timeout_s + CALL_TIMEOUT_S)

    # ---- the relay -----------------------------------------------------------------------------------

    def _relay(self) -> None:
        import ray

        while not self._stopping.is_set():
            try:
                lines = ray.get(self.host.read.remote(READ_WAIT_S), timeout=CALL_TIMEOUT_S)
            except Exception as exc:
                self._gone = self._died(exc)
                break
            if lines is None:
                break
            for line in lines:
                self._lines.put(line)
        self._lines.put(None)

    def _died(self, exc: Exception) -> str:
        after = (time.monotonic_ns() - self.started_ns) / 1e9
        return f"died on node {self.node[:8]}... {after:.1f} s in ({_first_line(exc)})"

    def _ended(self, phrase: str) -> str:
        """`phrase` with the worker's exit code and last output; the host's death alone when it cannot be asked (a node
        removed: not "worker exited (died on node ...)")."""
        import ray

        try:
            code = ray.get(self.host.exit_code.remote(2), timeout=CALL_TIMEOUT_S)
            tail = ray.get(self.host.stderr_tail.remote(), timeout=CALL_TIMEOUT_S)
        except Exception as exc:
            return self._died(exc)
        last = f"; last output: {tail[-1].strip()[:200]}" if tail else ""
        return f"{phrase} (exit code {code}{last})"


def on_driver_clock(message: BaseModel, shift_ns: int) -> BaseModel:
    """A message of a worker that reports on its node's own clock (the Java worker), its times moved by `shift_ns`
    onto this process's: a window's span, an outcome's (also a partial one inside an error)."""
    if shift_ns == 0:
        return message
    if isinstance(message, Progress) and message.window is not None:
        window = message.window
        return message.model_copy(update={"window": window.model_copy(update={
            "start_ns": window.start_ns + shift_ns, "end_ns": window.end_ns + shift_ns})})
    if isinstance(message, Error) and message.partial is not None:
        return message.model_copy(update={"partial": on_driver_clock(message.partial, shift_ns)})
    if isinstance(message, Outcome):
        return message.model_copy(update={name: value + shift_ns for name in ("start_ns", "end_ns")
                                          if (value := getattr(message, name)) is not None})
    return message


def _measure_clock(host, address: str) -> Clock:
    """The node's clocks by UDP pings to its actor's echo; through Ray calls when the echo cannot be reached."""
    import ray

    port = ray.get(host.clock_port.remote(), timeout=CALL_TIMEOUT_S)
    try:
        with UdpClockReader(address, port) as echo:
            return Clock.measure(echo.read)
    except (TimeoutError, OSError):
        return Clock.measure(lambda: ray.get(host.clocks.remote(), timeout=CALL_TIMEOUT_S), pings=9, via="ray")


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0][:160]}" if text else type(exc).__name__

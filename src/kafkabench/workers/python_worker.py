"""The Python worker: `python -m kafkabench.workers.python_worker`, one client run, core.protocol on stdio."""

from __future__ import annotations

import gc
import importlib
import sys
import threading
from pathlib import Path
from typing import Callable

from kafkabench.core import protocol
from kafkabench.core.clock import shifted
from kafkabench.core.protocol import (BadParams, ConsumeParams, DeliveryConsumerParams, DeliveryParams, Error, Finish, Outcome, PingPongParams,
                                      ProduceParams, Progress, Ready, Result, Round, ScenarioParams, Start, Task,
                                      read_params)
from kafkabench.workers.adapters import ADAPTERS, load_adapter
from kafkabench.workers.adapters.base import KafkaClient
from kafkabench.workers.consume import ConsumeRun
from kafkabench.workers.delivery import EXITING, DeliveryRun
from kafkabench.workers.http_baseline import HttpBaseline
from kafkabench.workers.kafka_ping_pong import KafkaPingPong
from kafkabench.workers.ping_pong import ExchangeFailed, PingPong, Transport
from kafkabench.workers.produce import ProduceRun
from kafkabench.workers.tcp_floor import TcpFloor
from kafkabench.workers.throughput_run import RunFailed

PSEUDO_CLIENTS = {"http": HttpBaseline, "tcp": TcpFloor}


def make_transport(task: Task, payload: bytes) -> Transport:
    if task.client in PSEUDO_CLIENTS:
        return PSEUDO_CLIENTS[task.client](task, payload)
    if task.client in ADAPTERS:
        return KafkaPingPong(load_adapter(task.client), task, payload)
    raise ExchangeFailed("config", f"unknown client {task.client!r}")


_SENDING = threading.Lock()  # a consumer's watchdog reports from a thread of its own


def send(message) -> None:
    line = protocol.encode(message)
    with _SENDING:
        sys.stdout.write(line)
        sys.stdout.flush()


def serve(task: Task, params: PingPongParams) -> int:
    try:
        transport = make_transport(task, Path(task.payload_files[0]).read_bytes())
    except (ExchangeFailed, OSError) as exc:
        send(Error(message=str(exc), kind="config"))
        return 2
    run = PingPong(transport, pause_s=params.pause_s)
    version = transport.version()

    def rounds() -> int:
        transport.open()
        run.start(task.warmup)
        _freeze_the_harness()
        send(Ready(client_version=version))
        for line in sys.stdin:
            message = protocol.decode(line)
            if isinstance(message, Round):
                run.run_round(message.count)
                send(Progress(done=run.measured))
            elif isinstance(message, Finish):
                transport.finish()
                send(Result(**run.outcome(version).model_dump()))
                return 0
        return 0  # stdin closed: the orchestrator is gone

    return _reporting(rounds, lambda: run.outcome(version), transport.close)


def _reporting(body: Callable[[], int], partial: Callable[[], Outcome], close: Callable[[], None]) -> int:
    """Run a scenario; whatever ends it early is reported as an `error` with what was measured so far."""
    try:
        return body()
    except RunFailed as failed:
        send(Error(message=failed.message, kind=failed.kind, partial=partial()))
        return 1
    except Exception as exc:  # a client library's surprise must not cost the measurements already made
        send(Error(message=f"{type(exc).__name__}: {exc}", kind="failure", partial=partial()))
        raise
    finally:
        close()


def serve_throughput(task: Task, params: ProduceParams | ConsumeParams) -> int:
    """produce / consume: ready, wait for start, stream windows, result; `finish` on stdin stops early."""
    if task.client not in ADAPTERS:
        return _no_such_client(task)
    client, started, stop = _controlled(task)
    if isinstance(params, ProduceParams):
        run = ProduceRun(client, task, params, [Path(p).read_bytes() for p in task.payload_files], stop,
                         clock=shifted(task.clock_offset_ns))
    else:
        run = ConsumeRun(client, task, params, stop, clock=shifted(task.clock_offset_ns))
    version = client.version()

    def scenario() -> int:
        run.open()
        send(Ready(client_version=version))
        if isinstance(run, ConsumeRun):
            run.wait_for_start(started, stop)
        else:
            while not started.wait(0.5) and not stop.is_set():
                pass
        _freeze_the_harness()
        run.run(send)
        send(Result(**run.outcome(version).model_dump()))
        return 0

    return _reporting(scenario, lambda: run.outcome(version), client.close)


def serve_delivery(task: Task, params: DeliveryParams) -> int:
    """delivery: ready, wait for start, send as the mode says (until its count, or `finish`), result; then the mode
    ends the process (an exit at once, or a return that leaves the client open for the orchestrator to watch)."""
    if task.client not in ADAPTERS:
        return _no_such_client(task)
    client, started, stop = _controlled(task)
    run = DeliveryRun(client, task, params, send, finish=stop)
    version = client.version()

    def scenario() -> int:
        run.open()
        send(Ready(client_version=version))
        while not started.wait(0.5) and not stop.is_set():
            pass
        run.run()
        send(Result(**run.outcome(version).model_dump()))
        if params.mode in EXITING:
            run.exit_now()
        return 0

    return _reporting(scenario, lambda: run.outcome(version), client.close if params.mode != "async-return" else _keep_open)


CONSUMER_RUNS = {"confluent": "ConfluentConsumerRun", "kafka-python": "KafkaPythonConsumerRun",
                 "aiokafka": "AiokafkaConsumerRun"}  # client -> its ConsumerRun, in workers.delivery_consumer_<client>
SHARE_RUNS = {"confluent": "ConfluentShareRun"}  # client -> its share member, in workers.share_consumer_<client>


def serve_delivery_consumer(task: Task, params: DeliveryConsumerParams) -> int:
    """delivery_consumer: ready once subscribed, wait for start, consume (and copy) until finish, result."""
    share = params.mode == "share"
    runs, module_name = (SHARE_RUNS, "share_consumer") if share else (CONSUMER_RUNS, "delivery_consumer")
    if task.client not in runs:
        if share and task.client in CONSUMER_RUNS:
            send(Error(message=f"{task.client} has no share consumer: share groups are for confluent and java",
                       kind="config"))
            return 2
        return _no_such_client(task)
    _, started, stop = _controlled(task, adapter=False)
    module = importlib.import_module(f"kafkabench.workers.{module_name}_{task.client.replace('-', '_')}")
    run = getattr(module, runs[task.client])(task, params, send)
    version = load_adapter(task.client).version()

    def scenario() -> int:
        run.open()
        send(Ready(client_version=version))
        while not started.wait(0.5) and not stop.is_set():
            pass
        run.run(stop)
        send(Result(**run.outcome(version).model_dump()))
        return 0

    return _reporting(scenario, lambda: run.outcome(version), run.close)


def _no_such_client(task: Task) -> int:
    send(Error(message=f"the {task.scenario} scenario has no client {task.client!r}", kind="config"))
    return 2


def _controlled(task: Task, adapter: bool = True) -> tuple[KafkaClient | None, threading.Event, threading.Event]:
    """The task's client (unless the scenario makes its own), and the `start` and `finish` signals read from stdin
    while the scenario runs."""
    client = load_adapter(task.client) if adapter else None
    started, stop = threading.Event(), threading.Event()
    threading.Thread(target=_control, args=(started, stop), daemon=True).start()
    return client, started, stop


def _keep_open() -> None:
    """async-return leaves its client as the scenario had it: whether the process then ends is the finding."""


def _freeze_the_harness() -> None:
    """Move every object that exists before the run (modules, pydantic models, numpy, the client) out of the
    cyclic garbage collector's sight: a batch of 10,000 tracked Message objects triggers collections, and the
    full ones would otherwise walk the harness's ~40,000 objects each time, a cost the client alone does not
    have. The run's own objects are collected as usual."""
    gc.collect()
    gc.freeze()


def _control(started: threading.Event, stop: threading.Event) -> None:
    """Read `start` and `finish` while the scenario runs; a closed stdin means the orchestrator is gone."""
    for line in sys.stdin:
        message = protocol.decode(line)
        if isinstance(message, Start):
            started.set()
        elif isinstance(message, Finish):
            stop.set()
    stop.set()


SCENARIOS = tuple(protocol.SCENARIO_PARAMS)  # this worker serves every scenario


def main() -> int:
    line = sys.stdin.readline()
    try:
        task = protocol.decode(line)
        if not isinstance(task, Task) or task.scenario not in SCENARIOS:
            raise ValueError(f"expected a task for one of {', '.join(SCENARIOS)}, got {line.strip()[:80]!r}")
        params = read_params(task)  # before any client exists: a typo costs no connection, and names itself
    except BadParams as exc:
        send(Error(message=str(exc), kind="config"))
        return 2
    except ValueError as exc:
        send(Error(message=f"bad task: {exc}", kind="config"))
        return 2
    return _dispatch(task, params)


def _dispatch(task: Task, params: ScenarioParams) -> int:
    if isinstance(params, DeliveryParams):
        return serve_delivery(task, params)
    if isinstance(params, DeliveryConsumerParams):
        return serve_delivery_consumer(task, params)
    if isinstance(params, (ProduceParams, ConsumeParams)):
        return serve_throughput(task, params)
    return serve(task, params)


if __name__ == "__main__":
    sys.exit(main())

"""The Python worker: `python -m kafkabench.workers.python_worker`, one client run, core.protocol on stdio."""

from __future__ import annotations

import sys
from pathlib import Path

from kafkabench.core import protocol
from kafkabench.core.protocol import Error, Finish, Progress, Ready, Result, Round, Task
from kafkabench.workers.adapters import ADAPTERS, load_adapter
from kafkabench.workers.http_baseline import HttpBaseline
from kafkabench.workers.kafka_ping_pong import KafkaPingPong
from kafkabench.workers.ping_pong import ExchangeFailed, PingPong, Transport
from kafkabench.workers.tcp_floor import TcpFloor

PSEUDO_CLIENTS = {"http": HttpBaseline, "tcp": TcpFloor}


def make_transport(task: Task, payload: bytes) -> Transport:
    if task.client in PSEUDO_CLIENTS:
        return PSEUDO_CLIENTS[task.client](task, payload)
    if task.client in ADAPTERS:
        return KafkaPingPong(load_adapter(task.client), task, payload)
    raise ExchangeFailed("config", f"unknown client {task.client!r}")


def send(message) -> None:
    sys.stdout.write(protocol.encode(message))
    sys.stdout.flush()


def serve(task: Task) -> int:
    try:
        transport = make_transport(task, Path(task.payload_files[0]).read_bytes())
    except (ExchangeFailed, OSError) as exc:
        send(Error(message=str(exc), kind="config"))
        return 2
    run = PingPong(transport)
    version = ""
    try:
        version = transport.version()
        transport.open()
        run.start(task.warmup)
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
    except ExchangeFailed as failed:
        send(Error(message=failed.message, kind=failed.kind, partial=run.outcome(version)))
        return 1
    except Exception as exc:  # a client library's surprise must not cost the measurements already made
        send(Error(message=f"{type(exc).__name__}: {exc}", kind="failure", partial=run.outcome(version)))
        raise
    finally:
        transport.close()


def main() -> int:
    line = sys.stdin.readline()
    try:
        task = protocol.decode(line)
        if not isinstance(task, Task) or task.scenario != "ping_pong":
            raise ValueError(f"expected a ping_pong task, got {line.strip()[:80]!r}")
    except ValueError as exc:
        send(Error(message=f"bad task: {exc}", kind="config"))
        return 2
    return serve(task)


if __name__ == "__main__":
    sys.exit(main())

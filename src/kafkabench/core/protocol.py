"""The worker protocol: JSON lines on stdio, one message per line.

Ping-pong (latency lab): orchestrator -> worker: one `task`, then any number of `round`s, then `finish`;
worker -> orchestrator: `ready` once set up (after the cold message and warm-up), a `progress` after each
round, then one `result`. Rounds let the orchestrator interleave clients (A B C ...) while each client
keeps one process.

Produce / consume (throughput lab): one `task`; the worker answers `ready` when it can start at once (a
consumer: once its partitions are assigned and positioned); the orchestrator sends `start` to all workers
together; each worker sends a `progress` with a `window` every `interval_s`, and one `result` when its
count or duration is done, or as soon as it reads `finish` (an early stop).

Any worker may send an `error` instead, carrying the partial outcome measured so far.
Histograms travel encoded (see core.histogram); the Java worker speaks the same protocol.
"""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal, Union

from pydantic import BaseModel, Field, TypeAdapter

PROTOCOL_VERSION = 1


class Task(BaseModel):
    type: Literal["task"] = "task"
    protocol: int = PROTOCOL_VERSION
    scenario: str  # e.g. "ping_pong"
    client: str
    bootstrap_servers: str = ""
    topic: str = ""
    producer_config: dict[str, Any] = {}  # already in the client's own names
    consumer_config: dict[str, Any] = {}
    payload_files: list[str] = []  # the exact values to send (ping_pong: the first; produce: sampled in turn)
    payload_sha256s: list[str] = []  # of each file, to check values read back
    warmup: int = 0
    timeout_s: float = 30  # ping_pong: per message; produce: no ack at all for this long ends the run
    params: dict[str, Any] = {}  # scenario parameters, see the scenario's module


class Round(BaseModel):
    type: Literal["round"] = "round"
    count: int


class Start(BaseModel):
    type: Literal["start"] = "start"


class Finish(BaseModel):
    type: Literal["finish"] = "finish"


class Ready(BaseModel):
    type: Literal["ready"] = "ready"
    client_version: str


class Window(BaseModel):
    """What one worker did in one progress interval (monotonic ns; all workers run on one host)."""

    index: int
    start_ns: int
    end_ns: int
    records: int  # acknowledged (producer) or received (consumer) in this window
    payload_bytes: int
    errors: int = 0
    histograms: dict[str, str] = {}  # metric -> encoded HdrHistogram of this window only


class Progress(BaseModel):
    type: Literal["progress"] = "progress"
    done: int  # measured messages so far
    window: Window | None = None


class Outcome(BaseModel):
    """What a worker measured; complete in a `result`, partial inside an `error`."""

    client_version: str = ""
    histograms: dict[str, str] = {}  # metric -> encoded HdrHistogram (us)
    counters: dict[str, int] = {}
    resources: dict[str, float] = {}
    effective_config: dict[str, dict[str, Any]] = {}  # producer/consumer as the client reports them
    duration_s: float = 0.0  # ping_pong: measured rounds; produce/consume: first send (record) to last ack (record)
    start_ns: int | None = None  # monotonic, to merge several workers' wall time
    end_ns: int | None = None
    timings: dict[str, float] = {}  # e.g. rebalance_s, first_record_s


class Result(Outcome):
    type: Literal["result"] = "result"


class Error(BaseModel):
    type: Literal["error"] = "error"
    message: str
    kind: str = "failure"  # failure | integrity | config | timeout
    partial: Outcome | None = None


Message = Annotated[Union[Task, Round, Start, Finish, Ready, Progress, Result, Error], Field(discriminator="type")]
_MESSAGE = TypeAdapter(Message)


def encode(message: BaseModel) -> str:
    return message.model_dump_json() + "\n"


def decode(line: str) -> BaseModel:
    return _MESSAGE.validate_python(json.loads(line))

"""The worker protocol: JSON lines on stdio, one message per line.

Orchestrator -> worker: one `task`, then any number of `round`s, then `finish`.
Worker -> orchestrator: `ready` once set up (after the cold message and warm-up), a `progress` after each
round, then one `result`; or an `error` at any point, carrying the partial result measured so far.
Rounds let the orchestrator interleave clients (A B C A B C ...) while each client keeps one process.
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
    payload_file: str  # the exact bytes to send
    payload_sha256: str
    warmup: int = 0
    timeout_s: float = 30  # per message: no ack or no value within this is an error


class Round(BaseModel):
    type: Literal["round"] = "round"
    count: int


class Finish(BaseModel):
    type: Literal["finish"] = "finish"


class Ready(BaseModel):
    type: Literal["ready"] = "ready"
    client_version: str


class Progress(BaseModel):
    type: Literal["progress"] = "progress"
    done: int  # measured messages so far


class Outcome(BaseModel):
    """What a worker measured; complete in a `result`, partial inside an `error`."""

    client_version: str = ""
    histograms: dict[str, str] = {}  # metric -> encoded HdrHistogram (us)
    counters: dict[str, int] = {}
    resources: dict[str, float] = {}
    effective_config: dict[str, dict[str, Any]] = {}  # producer/consumer as the client reports them
    duration_s: float = 0.0  # measured rounds only


class Result(Outcome):
    type: Literal["result"] = "result"


class Error(BaseModel):
    type: Literal["error"] = "error"
    message: str
    kind: str = "failure"  # failure | integrity | config | timeout
    partial: Outcome | None = None


Message = Annotated[Union[Task, Round, Finish, Ready, Progress, Result, Error], Field(discriminator="type")]
_MESSAGE = TypeAdapter(Message)


def encode(message: BaseModel) -> str:
    return message.model_dump_json() + "\n"


def decode(line: str) -> BaseModel:
    return _MESSAGE.validate_python(json.loads(line))

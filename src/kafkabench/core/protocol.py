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

A task's `params` travel as a plain JSON object because the Java worker reads them by name; each scenario's
model below (SCENARIO_PARAMS) is their one definition: labs build params with `task_params(Model(...))`,
the Python worker checks them with `read_params` before it creates a client. The models refuse any value
Params.java refuses, so a task that runs on one worker does not fail on the other for its params (the Java
worker alone also needs consume's `group`).
"""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal, Union

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, model_validator
from pydantic_core import ErrorDetails

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
    params: dict[str, Any] = {}  # wire form of the scenario's model, see task_params and read_params
    clock_offset_ns: int = 0  # added to this host's monotonic clock gives the orchestrator's (set by a launcher on
    # other machines): Python workers report and stamp every time on it; the Java worker does not read it yet


class BadParams(ValueError):
    """A task's params that its scenario would refuse; the message is one line naming the parameter."""


class ScenarioParams(BaseModel):
    """Strict as Params.java is: a value the Java worker would refuse (a string for a number, 5.0 for a
    count, 1 for true) must not pass here, or the same task would run on one worker and fail on the other."""

    model_config = ConfigDict(extra="forbid", strict=True, populate_by_name=True, frozen=True)


def _open_loop_rate(rate: float) -> float:
    if rate <= 0 and rate != -1:
        raise ValueError("must be > 0 or -1")
    return rate


RatePerS = Annotated[float, AfterValidator(_open_loop_rate)]  # an open-loop schedule, per s; -1: as fast as possible


class PingPongParams(ScenarioParams):
    """Its counts come in `task.warmup` and each `round`."""

    pause_s: float = Field(0.0, ge=0, description="seconds of quiet before each exchange after the cold one; 0: back "
                                                  "to back")


class ProduceParams(ScenarioParams):
    count: int | None = Field(None, ge=0, description="records to send; with duration_s, the first reached ends it")
    duration_s: float | None = Field(None, gt=0, description="seconds to send for, from `start`")
    rate_per_s: RatePerS = Field(-1.0, description="open-loop schedule of this worker, records/s; -1: as fast as possible")
    interval_s: float = Field(1.0, gt=0, description="seconds per progress window")
    stamp: bool = Field(False, description="put the intended send time in header kb-sent-ns, for consumers' e2e")
    warmup: int = Field(0, ge=0, description="records sent and acknowledged before `ready`, not measured "
                                             "(Java worker only: it warms the JIT)")
    records_file: str | None = Field(None, min_length=1, description="replay these values once, in order, instead "
                                     "of cycling through the payload files (Python worker only)")
    partitions: list[Annotated[int, Field(ge=0)]] | None = Field(None, min_length=1, description="send only to these "
                                                                 "partitions, in turn; unset: "
                                                                 "where the client's partitioner puts each record")
    topics: list[Annotated[str, Field(min_length=1)]] | None = Field(
        None, min_length=1, description="send to these topics in turn (each record at a rate, each batch as fast as "
                                        "possible); unset: the task's topic")
    keys: Literal["none", "round_robin", "random"] = Field("none", description="each record's key: none, or one of "
                                                            "KEY_POOL keys, in turn or at random (OMB's distributors)")
    wire_bytes: bool = Field(True, description="count the bytes sent to the brokers (confluent: from librdkafka's "
                                               "statistics report, built every 500 ms and naming every partition)")

    @model_validator(mode="after")
    def _one_topic_for_partitions(self) -> ProduceParams:
        if self.partitions and self.topics and len(self.topics) > 1:
            raise ValueError("params.partitions is for one topic, not with several topics")
        return self

    @model_validator(mode="after")
    def _bounded(self) -> ProduceParams:
        """A run with no end: the Java worker refuses it; a records file ends when its records do."""
        if self.count is None and self.duration_s is None and self.records_file is None:
            raise ValueError("params.count must be set when neither duration_s nor records_file is")
        return self


class DecodeSpec(ScenarioParams):
    format: str = Field(min_length=1, description="the format the values were written in (formats.codecs)")
    dataset: str = Field(min_length=1, description="the dataset whose schema decodes them (datasets.sources)")


class ConsumeParams(ScenarioParams):
    group: str | None = Field(None, min_length=1, description="the consumer group; the Java worker needs it (its "
                              "group.id), Python workers take group.id from consumer_config")
    start_from: Literal["earliest", "latest"] = Field("earliest", alias="from", description="where a group with no "
                                                       "committed offsets starts; latest: after `ready`")
    count: int | None = Field(None, ge=0, description="records to read; with duration_s, the first reached ends it")
    duration_s: float | None = Field(None, gt=0, description="seconds to read for, from `start`")
    interval_s: float = Field(1.0, gt=0, description="seconds per progress window")
    check: bool = Field(False, description="every value must be one of the task's payloads (payload_sha256s)")
    idle_timeout_s: float | None = Field(None, gt=0, description="after `start`, no record for this long ends the "
                                         "run normally; unset: the task's timeout_s (Python), never (Java)")
    decode: DecodeSpec | None = Field(None, description="decode every value as an application would (Python only)")
    stop_offsets: dict[Annotated[int, Field(strict=False)], int] | None = Field(None, description="partition -> the offset to stop before: records "
                                                "at or past it are not read into the run, so consumers sharing a "
                                                "count each stop there and together read exactly the count "
                                                "(JSON keys are strings: the partition number as text)")
    partitions: list[Annotated[int, Field(ge=0)]] | None = Field(None, min_length=1, description="read these "
                                                                 "partitions, assigned without joining a group; unset: "
                                                                 "the group's share of the topic")
    topics: list[Annotated[str, Field(min_length=1)]] | None = Field(
        None, min_length=1, description="subscribe to these topics in the group; unset: the task's topic")
    record_time_e2e: bool = Field(False, description="also `e2e_record_time`, OMB's e2e: this host's wall clock "
                                  "minus the record's timestamp, in whole milliseconds, samples at or below 0 dropped")

    @model_validator(mode="after")
    def _one_topic_for_partitions(self) -> ConsumeParams:
        if self.partitions and self.topics and len(self.topics) > 1:
            raise ValueError("params.partitions is for one topic, not with several topics")
        return self


RECORD_TIME = "e2e_record_time"  # the metric ConsumeParams.record_time_e2e adds
KEY_POOL = 10_000  # keys of ProduceParams.keys: "key0000000" ... "key0009999" (OMB draws 10,000 random ones)


def pool_key(index: int) -> bytes:
    return b"key%07d" % (index % KEY_POOL)


DELIVERY_MODES = ("sync", "async-close", "async-exit", "async-return", "async-sleep")


class DeliveryParams(ScenarioParams):
    """The delivery lab's producer (seed 004): every message's id in its value, every answer in a history
    file mapped as it is written, and the process ending the way `mode` says."""

    mode: Literal["sync", "async-close", "async-exit", "async-return", "async-sleep"] = Field(
        description="sync: each send waits for its answer; async-close: send all, then flush and close; async-exit: "
                    "send all, then exit the process at once; async-return: send all, then return without closing; "
                    "async-sleep: send all, sleep sleep_ms, then exit at once")
    count: int = Field(ge=1, le=2**32, description="messages, sequences 0..count-1")
    producer: int = Field(0, ge=0, le=65_535, description="this producer's id in every message")
    history_dir: str = Field(min_length=1, description="where the mapped history's files go")
    size: int = Field(14, ge=14, description="bytes per value (the id takes 14)")
    singles: int = Field(8, ge=0, description="the first sends, each timed alone (the seed's stopwatch)")
    sleep_ms: int = Field(0, ge=0, description="async-sleep: how long before the exit")
    rate_per_s: RatePerS = Field(-1.0, description="the bulk's open-loop schedule, messages/s; -1: as fast as possible")
    stamp: bool = Field(False, description="put each message's intended send time in header kb-sent-ns, for an e2e "
                                           "consumer beside the producer")
    transaction_size: int = Field(0, ge=0, description="messages per transaction (the producer config holds its "
                                                       "transactional.id); 0: no transactions")
    abort_ratio: float = Field(0.0, ge=0, lt=1, description="with transactions: the share aborted on purpose, spread "
                                                            "evenly: transaction t (from 0) is aborted when "
                                                            "floor((t + 1) * ratio) > floor(t * ratio)")

    @model_validator(mode="after")
    def _sleep(self) -> DeliveryParams:
        if (self.mode == "async-sleep") != (self.sleep_ms > 0):
            raise ValueError("params.sleep_ms must be > 0 with mode async-sleep, and only with it")
        if self.transaction_size and self.singles:
            raise ValueError("params.singles must be 0 with transactions: a transaction's sends are not timed alone")
        if self.abort_ratio and not self.transaction_size:
            raise ValueError("params.abort_ratio needs transaction_size")
        return self


CONSUMER_MODES = ("auto-commit", "commit-after", "commit-before", "copy")


class DeliveryConsumerParams(ScenarioParams):
    """The delivery lab's consumers and copiers: one member of a consumer group reading the delivery ids of
    `task.topic` (written by producer `producer`, `count` of them) until `finish`. Its processing: recording each
    record in a mapped history of processed counts (core.delivery_processed), so a killed consumer keeps what it
    did; a copier's: writing the record, unchanged, to the same partition of `output_topic` in a transaction that
    also carries the consumer's offsets (the producer config holds its transactional.id)."""

    mode: Literal["auto-commit", "commit-after", "commit-before", "copy", "share"] = Field(
        description="auto-commit: the client commits in the background (enable.auto.commit); commit-after: each "
                    "batch processed, then its offsets committed (at-least-once); commit-before: each batch's offsets "
                    "committed, then processed (at-most-once); copy: each batch written to output_topic in a "
                    "transaction with its offsets (exactly-once); share: a member of a share group (KIP-932), each "
                    "record processed and acknowledged (ACCEPT), each batch's acknowledgements committed "
                    "(at-least-once)")
    group: str = Field(min_length=1, description="the consumer group (group.id), or the share group")
    producer: int = Field(0, ge=0, le=65_535, description="the producer whose ids the input carries")
    count: int = Field(ge=1, le=2**32, description="the input's messages, sequences 0..count-1")
    batch: int = Field(100, ge=1, description="records per poll: per commit, or per transaction of a copier")
    process_ms: float = Field(0.0, ge=0, description="consumer modes: the time each record's processing takes "
                                                     "(a sleep), so that a kill lands inside a batch")
    history_dir: str | None = Field(None, min_length=1, description="consumer modes: where the processed history's "
                                                                    "files go")
    output_topic: str | None = Field(None, min_length=1, description="copy: the topic the copies go to")
    pattern: str | None = Field(None, pattern=r"^\^", description=(
        "commit-after, commit-before, auto-commit: the member subscribes to the topics this regular expression matches "
        "(starting with ^, as librdkafka takes one), task.topic and, once it exists, new_topic"))
    new_topic: str | None = Field(None, min_length=1, description="pattern: the topic created later that it matches")
    new_producer: int | None = Field(None, ge=0, le=65_535, description="pattern: the producer whose ids new_topic "
                                                                        "carries")
    new_count: int | None = Field(None, ge=1, le=2**32, description="pattern: new_topic's messages, 0..new_count-1")
    numbered_from: int | None = Field(None, ge=1, le=2**31 - 1, description=(
        "pattern: new_topic's partitions are numbered from this one on in the member's commits, assignments and "
        "reports (task.topic's from 0): one number per partition of both topics"))

    @model_validator(mode="after")
    def _stage(self) -> DeliveryConsumerParams:
        copy = self.mode == "copy"
        if copy != (self.output_topic is not None) or copy == (self.history_dir is not None):
            raise ValueError("params.output_topic goes with mode copy, params.history_dir with the other modes")
        if copy and self.process_ms:
            raise ValueError("params.process_ms is for the consumer modes: a copier's processing is its copy")
        pattern = (self.pattern, self.new_topic, self.new_producer, self.new_count, self.numbered_from)
        if any(value is not None for value in pattern):
            if any(value is None for value in pattern):
                raise ValueError("params.pattern, new_topic, new_producer, new_count and numbered_from go together")
            if self.mode in ("copy", "share"):
                raise ValueError(f"params.pattern: mode {self.mode} reads task.topic alone")
            if self.new_producer == self.producer:
                raise ValueError("params.new_producer: new_topic's producer is another than task.topic's")
        return self


SCENARIO_PARAMS: dict[str, type[ScenarioParams]] = {
    "ping_pong": PingPongParams, "produce": ProduceParams, "consume": ConsumeParams, "delivery": DeliveryParams,
    "delivery_consumer": DeliveryConsumerParams,
}


def task_params(params: ScenarioParams) -> dict[str, Any]:
    """The wire form: `from` by its alias, as Java reads it; unset optionals left out, which both workers read
    as absent (Params.java treats a missing key and null alike)."""
    return params.model_dump(mode="json", by_alias=True, exclude_none=True)


def read_params(task: Task) -> ScenarioParams:
    """Validate at the edge, so a typo or a bad value is one config error before any client is created."""
    model = SCENARIO_PARAMS.get(task.scenario)
    if model is None:
        raise BadParams(f"{task.scenario}: no such scenario; expected one of {', '.join(SCENARIO_PARAMS)}")
    try:
        params = model.model_validate(task.params)
    except ValidationError as exc:
        raise BadParams(_explain(task.scenario, exc)) from None
    if isinstance(params, ConsumeParams) and params.check and not task.payload_sha256s:
        raise BadParams(f"{task.scenario}: params.check must be false when the task has no payload_sha256s")
    return params


_EXPECTED = {
    "int_type": "an integer", "float_type": "a number", "bool_type": "true or false", "string_type": "a string",
    "string_too_short": "a non-empty string", "model_type": "an object", "dict_type": "an object",
    "greater_than": "> {gt:g}", "greater_than_equal": ">= {ge:g}", "literal_error": "{expected}",
}


def _explain(scenario: str, error: ValidationError) -> str:
    """The first problem in the Java worker's words; one at a time is enough to fix a task."""
    problems = error.errors(include_url=False)
    more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
    return f"{scenario}: {_problem(scenario, problems[0])}{more}"


def _problem(scenario: str, problem: ErrorDetails) -> str:
    name = "params" + "".join(f".{_key(part)}" for part in problem["loc"])
    kind, ctx = problem["type"], problem.get("ctx", {})
    if kind == "extra_forbidden":
        return f"{name} is not a parameter of {scenario}"
    if kind == "missing":
        return f"{name} is required"
    if kind == "value_error":
        reason = str(ctx.get("error", problem["msg"]))
        return reason if not problem["loc"] else f"{name} {reason}, got {_shown(problem['input'])}"
    expected = _EXPECTED[kind].format(**ctx) if kind in _EXPECTED else f"valid ({problem['msg']})"
    return f"{name} must be {expected}, got {_shown(problem['input'])}"


def _key(part: int | str) -> str:
    """A key as given, unless it could break the line or be misread (`a.b`, a newline): then quoted."""
    return part if isinstance(part, str) and part.isidentifier() else json.dumps(part)


def _shown(value: Any) -> str:
    text = json.dumps(value, default=repr)
    return text if len(text) <= 60 else text[:57] + "..."


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
    done: int  # measured messages so far (delivery: sent)
    window: Window | None = None
    acked: int | None = None  # delivery: acknowledged so far
    assigned: list[int] | None = None  # delivery_consumer: the partitions the member holds now
    calling: str | None = None  # delivery_consumer: the client call in progress for over a second ...
    calling_s: float | None = None  # ... and for how long: where a stalled process is


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

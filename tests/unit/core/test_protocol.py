import json
import re
from pathlib import Path

import pytest
from pydantic import ValidationError

import kafkabench.workers.java as java_sources
from kafkabench.core import protocol
from kafkabench.core.protocol import (SCENARIO_PARAMS, BadParams, ConsumeParams, DecodeSpec, DeliveryConsumerParams,
                                      DeliveryParams, Error,
                                      Finish, Outcome,
                                      PingPongParams, ProduceParams, Progress, Ready, Result, Round, Start, Task,
                                      Window, read_params, task_params)

MESSAGES = [
    Task(scenario="ping_pong", client="confluent", bootstrap_servers="127.0.0.1:9092", topic="t",
         producer_config={"acks": "1", "linger.ms": 0}, consumer_config={"fetch.wait.max.ms": 10},
         payload_files=["/tmp/p.bin"], payload_sha256s=["ab" * 32], params={"count": 5}, warmup=3, timeout_s=5),
    Round(count=20),
    Start(),
    Finish(),
    Ready(client_version="2.16.1"),
    Progress(done=40),
    Progress(done=900, window=Window(index=3, start_ns=10, end_ns=20, records=300, payload_bytes=30000, errors=1,
                                     histograms={"publish_latency": "HISTF..."})),
    Result(client_version="1", histograms={"e2e": "HISTF..."}, counters={"sent": 3}, resources={"cpu_s": 0.5},
           effective_config={"producer": {"acks": "1"}}, duration_s=1.5),
    Error(message="no value for message 3 within 5 s", kind="timeout", partial=Outcome(counters={"sent": 3})),
]


@pytest.mark.parametrize("message", MESSAGES, ids=lambda m: m.type)
def test_every_message_round_trips_as_one_line(message):
    line = protocol.encode(message)
    assert line.endswith("\n") and line.count("\n") == 1
    assert protocol.decode(line) == message


def test_unknown_type_is_rejected():
    with pytest.raises(ValidationError):
        protocol.decode('{"type": "bogus"}')


# --- scenario params -------------------------------------------------------------------------------------

JAVA_SCENARIOS = {"produce": "Produce.java", "consume": "Consume.java", "delivery": "Delivery.java",
                  "delivery_consumer": "DeliveryConsumer.java"}
FULL = {
    "ping_pong": PingPongParams(),
    "produce": ProduceParams(count=1000, duration_s=30, rate_per_s=5000, interval_s=0.5, stamp=True,
                             records_file="/tmp/records.bin"),
    "consume": ConsumeParams(group="g1", start_from="latest", count=1000, duration_s=30, interval_s=0.5, check=True,
                             idle_timeout_s=10, decode=DecodeSpec(format="avro", dataset="purchases")),
    "delivery": DeliveryParams(mode="async-sleep", count=10, producer=2, history_dir="/tmp/h", size=20, singles=3,
                               sleep_ms=100, rate_per_s=50.0),
    "delivery_consumer": DeliveryConsumerParams(mode="commit-before", group="g", producer=3, count=10, batch=5,
                                                process_ms=1.5, history_dir="/tmp/h", pattern="^t([.]new)?$",
                                                new_topic="t.new", new_producer=4, new_count=7, numbered_from=6),
}
MINIMAL = {"ping_pong": PingPongParams(), "produce": ProduceParams(count=1), "consume": ConsumeParams(),
           "delivery": DeliveryParams(mode="sync", count=1, history_dir="/tmp/h"),
           "delivery_consumer": DeliveryConsumerParams(mode="copy", group="g", count=1, output_topic="out")}


def java_reads(scenario: str) -> set[str]:
    """The param names the Java worker reads, taken from its source so the test follows it."""
    source = (Path(java_sources.__file__).parent / JAVA_SCENARIOS[scenario]).read_text()
    return set(re.findall(r'params\.(?:count|number|nanos|flag|text)\("(\w+)"', source))


def _task(scenario: str, params: dict, **fields) -> Task:
    return Task(scenario=scenario, client="confluent", params=params, **fields)


@pytest.mark.parametrize("params", [*FULL.values(), *MINIMAL.values()], ids=lambda p: type(p).__name__)
def test_params_wire_form_round_trips_through_a_task_line(params):
    scenario = next(name for name, model in SCENARIO_PARAMS.items() if isinstance(params, model))
    task = _task(scenario, task_params(params), payload_sha256s=["ab" * 32])
    received = protocol.decode(protocol.encode(task))
    assert read_params(received) == params
    assert task_params(read_params(received)) == task.params


def test_from_travels_under_its_own_name():
    wire = task_params(ConsumeParams(start_from="latest"))
    assert wire["from"] == "latest" and "start_from" not in wire
    assert ConsumeParams.model_validate({"from": "latest"}) == ConsumeParams(start_from="latest")


@pytest.mark.parametrize("scenario", sorted(JAVA_SCENARIOS))
def test_every_key_the_java_worker_reads_is_on_the_wire_under_its_name(scenario):
    reads = java_reads(scenario)
    assert {"count"} <= reads and len(reads) >= 4  # the pattern still finds what Java reads
    assert reads <= set(task_params(FULL[scenario]))


@pytest.mark.parametrize("scenario", sorted(JAVA_SCENARIOS))
def test_an_unset_optional_is_left_out_and_a_default_is_sent(scenario):
    """Params.java reads a missing key as absent, and falls back to the same defaults."""
    wire = task_params(MINIMAL[scenario])
    assert None not in wire.values()
    defaults = {"produce": {"rate_per_s": -1, "interval_s": 1.0, "stamp": False},
                "consume": {"from": "earliest", "interval_s": 1.0, "check": False},
                "delivery": {"producer": 0, "size": 14, "singles": 8, "sleep_ms": 0, "rate_per_s": -1},
                "delivery_consumer": {"producer": 0, "batch": 100, "process_ms": 0.0}}[scenario]
    assert {key: wire[key] for key in defaults} == defaults


def test_wire_values_have_the_json_types_params_java_checks():
    wire = json.loads(json.dumps({**task_params(FULL["produce"]), **task_params(FULL["consume"])}))
    assert isinstance(wire["count"], int) and not isinstance(wire["count"], bool)
    assert all(isinstance(wire[k], (int, float)) for k in ("duration_s", "rate_per_s", "interval_s", "idle_timeout_s"))
    assert all(isinstance(wire[k], bool) for k in ("stamp", "check"))
    assert all(isinstance(wire[k], str) for k in ("group", "from"))


@pytest.mark.parametrize("model", [ProduceParams, ConsumeParams, DecodeSpec, DeliveryConsumerParams])
def test_every_field_says_what_it_is(model):
    assert all(field.description for field in model.model_fields.values())


@pytest.mark.parametrize("scenario, params", [
    ("ping_pong", {}),
    ("produce", {"count": 0}),  # Params.java takes 0: a producer whose share of a split count is nothing
    ("produce", {"duration_s": 5}),
    ("produce", {"records_file": "/tmp/r.bin"}),  # ends when the file does
    ("produce", {"count": None, "duration_s": 2.5, "rate_per_s": 100}),  # null reads as absent, as in Java
    ("consume", {}),
    ("consume", {"group": "g", "from": "latest", "idle_timeout_s": 3600, "decode": {"format": "json", "dataset": "d"}}),
])
def test_accepted_params(scenario, params):
    read_params(_task(scenario, params))


BAD = [
    ("produce", {"count": 10, "rate_per_s": 0}, "produce: params.rate_per_s must be > 0 or -1, got 0"),
    ("produce", {"count": 10, "rate_per_s": -5.5}, "produce: params.rate_per_s must be > 0 or -1, got -5.5"),
    ("produce", {"count": 10, "rate_per_s": "fast"}, 'produce: params.rate_per_s must be a number, got "fast"'),
    ("produce", {"count": 10, "interval_s": 0}, "produce: params.interval_s must be > 0, got 0"),
    ("produce", {"count": 10.0}, "produce: params.count must be an integer, got 10.0"),
    ("produce", {"count": -1}, "produce: params.count must be >= 0, got -1"),
    ("produce", {"count": 10, "stamp": 1}, "produce: params.stamp must be true or false, got 1"),
    ("produce", {"duration_s": 0}, "produce: params.duration_s must be > 0, got 0"),
    ("produce", {"rate_per_s": 100}, "produce: params.count must be set when neither duration_s nor records_file is"),
    ("produce", {"count": 10, "records_file": ""}, 'produce: params.records_file must be a non-empty string, got ""'),
    ("produce", {"count": 10, "group": "g"}, "produce: params.group is not a parameter of produce"),
    ("consume", {"intervl_s": 1}, "consume: params.intervl_s is not a parameter of consume"),
    ("consume", {"from": "beginning"}, "consume: params.from must be 'earliest' or 'latest', got \"beginning\""),
    ("consume", {"start_from": "latest", "from": "latest"}, "consume: params.start_from is not a parameter of consume"),
    ("consume", {"group": ""}, 'consume: params.group must be a non-empty string, got ""'),
    ("consume", {"idle_timeout_s": 0}, "consume: params.idle_timeout_s must be > 0, got 0"),
    ("consume", {"check": "yes"}, 'consume: params.check must be true or false, got "yes"'),
    ("consume", {"check": True}, "consume: params.check must be false when the task has no payload_sha256s"),
    ("consume", {"decode": "avro"}, 'consume: params.decode must be an object, got "avro"'),
    ("consume", {"decode": {"format": "avro"}}, "consume: params.decode.dataset is required"),
    ("consume", {"decode": {"format": "avro", "dataset": "d", "x": 1}},
     "consume: params.decode.x is not a parameter of consume"),
    ("consume", {"bad\nkey": 1}, 'consume: params."bad\\nkey" is not a parameter of consume'),
    ("consume", {"count": "ten", "bogus": 1}, 'consume: params.count must be an integer, got "ten" (and 1 more)'),
    ("ping_pong", {"count": 5}, "ping_pong: params.count is not a parameter of ping_pong"),
    ("delivery_consumer", {"mode": "copy", "group": "g", "count": 5, "history_dir": "/tmp/h"},
     "delivery_consumer: params.output_topic goes with mode copy, params.history_dir with the other modes"),
    ("delivery_consumer", {"mode": "copy", "group": "g", "count": 5, "output_topic": "o", "process_ms": 1.0},
     "delivery_consumer: params.process_ms is for the consumer modes: a copier's processing is its copy"),
]


@pytest.mark.parametrize("scenario, params, message", BAD, ids=[m.split(" ")[1] for _, _, m in BAD])
def test_bad_params_give_one_line_naming_the_parameter(scenario, params, message):
    with pytest.raises(BadParams) as raised:
        read_params(_task(scenario, params))
    assert str(raised.value) == message
    assert "\n" not in str(raised.value) and isinstance(raised.value, ValueError)


def test_building_a_model_refuses_what_the_worker_would():
    """Labs build params from the models, so a bad value fails in the lab, before any worker starts."""
    with pytest.raises(ValidationError):
        ProduceParams(count=10, rate_per_s=0)
    with pytest.raises(ValidationError):
        ConsumeParams(intervl_s=1)

import pytest
from pydantic import ValidationError

from kafkabench.core import protocol
from kafkabench.core.protocol import Error, Finish, Outcome, Progress, Ready, Result, Round, Start, Task, Window

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

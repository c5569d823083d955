"""`KafkaAdmin.offsets`' retries, against a scripted admin client: what a leadership move answers is asked again (with
the leaders looked up anew each time), anything else fails at once, and the bound holds."""

from concurrent.futures import Future
from types import SimpleNamespace

import pytest
from confluent_kafka import KafkaError, KafkaException
from confluent_kafka.admin import ListOffsetsResultInfo, OffsetSpec

from kafkabench.admin import KafkaAdmin, worth_asking_again
from kafkabench.errors import KafkaAdminError

EARLIEST, END = 5, 40
NO_ANSWER = -1001  # what librdkafka gives, without an error, for a leader that never answered
EARLIEST_SPEC = type(OffsetSpec.earliest())


class ScriptedAdmin:
    """confluent-kafka's AdminClient as `offsets` uses it: each time it is asked, a partition answers what its script
    says next (NO_ANSWER or an error code), and once the script has run out, its offsets."""

    def __init__(self, partitions: int, script: dict[int, list[int]]) -> None:
        self.partitions = partitions
        self.script = {p: list(answers) for p, answers in script.items()}
        self.metadata_asked = 0

    def list_topics(self, topic: str, timeout: float):
        self.metadata_asked += 1
        return SimpleNamespace(topics={topic: SimpleNamespace(error=None, partitions=dict.fromkeys(range(self.partitions)))})

    def list_offsets(self, requests: dict, request_timeout: float) -> dict:
        futures = {}
        for tp, spec in requests.items():
            script = self.script.get(tp.partition, [])
            answer = script.pop(0) if script else None
            futures[tp] = future = Future()
            if answer is None:
                future.set_result(ListOffsetsResultInfo(EARLIEST if isinstance(spec, EARLIEST_SPEC) else END, -1, -1))
            elif answer == NO_ANSWER:
                future.set_result(ListOffsetsResultInfo(NO_ANSWER, -1, -1))
            else:
                future.set_exception(KafkaException(KafkaError(answer)))
        return futures


def offsets_of(script: dict[int, list[int]], partitions: int = 2, timeout_s: float = 10) -> tuple[dict, ScriptedAdmin]:
    scripted = ScriptedAdmin(partitions, script)
    admin = KafkaAdmin("127.0.0.1:1", timeout_s=timeout_s)
    admin._admin = scripted
    try:
        return admin.offsets("t"), scripted
    finally:
        admin.close()


def test_a_moving_leadership_is_asked_again_with_the_leaders_looked_up_anew():
    found, scripted = offsets_of({0: [KafkaError.NOT_LEADER_FOR_PARTITION, NO_ANSWER, KafkaError.FENCED_LEADER_EPOCH],
                                  1: [KafkaError._NOENT]})
    assert found == {0: (EARLIEST, END), 1: (EARLIEST, END)}
    assert scripted.metadata_asked >= 3  # once an attempt: only a metadata answer moves librdkafka's leaders


def test_an_error_no_leader_move_causes_fails_at_once_in_one_line():
    with pytest.raises(KafkaAdminError) as raised:
        offsets_of({1: [KafkaError.TOPIC_AUTHORIZATION_FAILED]})
    assert str(raised.value) == "list offsets of t failed: partition 1: Broker: Topic authorization failed"


def test_a_partition_that_never_answers_fails_at_the_bound_saying_why():
    with pytest.raises(KafkaAdminError, match=r"^list offsets of t failed: no answer within 0\.5 s \(partition 0: "
                                              r"NOT_LEADER_FOR_PARTITION\); check that the topic exists"):
        offsets_of({0: [KafkaError.NOT_LEADER_FOR_PARTITION] * 1000}, timeout_s=0.5)


@pytest.mark.parametrize("code", [KafkaError.NOT_LEADER_FOR_PARTITION, KafkaError.LEADER_NOT_AVAILABLE,
                                  KafkaError.UNKNOWN_TOPIC_OR_PART, KafkaError.FENCED_LEADER_EPOCH,
                                  KafkaError.OFFSET_NOT_AVAILABLE, KafkaError._TRANSPORT, KafkaError._TIMED_OUT])
def test_what_a_leadership_move_answers_is_worth_asking_again(code):
    assert worth_asking_again(code)


@pytest.mark.parametrize("code", [KafkaError.TOPIC_AUTHORIZATION_FAILED, KafkaError.INVALID_REQUEST,
                                  KafkaError.UNSUPPORTED_VERSION, KafkaError._INVALID_ARG])
def test_what_the_request_itself_gets_wrong_is_not(code):
    assert not worth_asking_again(code)

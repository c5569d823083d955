"""The delivery lab's consumers and copiers without a broker: their scenario's refusals, the faults that hit a group's
members and the coordinator, and the exact checks of what they did against the input."""

import numpy as np
import pytest

from kafkabench.admin import java_string_hash
from kafkabench.core.delivery_processed import Processed
from kafkabench.errors import ConfigError
from kafkabench.faults.spec import FaultSpec, FaultSyntaxError
from kafkabench.labs.delivery import consumer_checks as checks
from kafkabench.labs.delivery.cells import expand
from kafkabench.labs.delivery.checker import ReadChunk
from kafkabench.labs.delivery.faults import FaultRun, Stage
from kafkabench.labs.delivery.scenario import DeliveryScenario
from tests.unit.labs.test_delivery_lab import FakeFaults, wait_for


def chunk(sequences, partitions, offsets, producer=0, foreign=0) -> ReadChunk:
    return ReadChunk(np.full(len(sequences), producer, np.uint16), np.array(sequences, np.int64),
                     np.array(partitions, np.int32), np.array(offsets, np.int64), foreign)


INPUT = [chunk([0, 2, 4], [0, 0, 0], [0, 1, 2]), chunk([1, 3], [1, 1], [0, 1], foreign=1)]  # 5 of 6 ids; 5 absent


def test_the_input_is_what_was_read_back_with_where_each_message_sits():
    given = checks.Input.read(0, 6, INPUT + [chunk([7], [1], [2]), chunk([0], [1], [3])])
    assert given.present.tolist() == [True] * 5 + [False]
    assert given.partition.tolist() == [0, 1, 0, 1, 0, -1] and given.offset.tolist() == [0, 0, 1, 1, 2, -1]
    assert (given.copies, given.strays) == (1, 2)  # id 0 again; one foreign value and a sequence past the count


def test_processed_counts_sum_every_process_and_name_examples():
    given = checks.Input.read(0, 6, INPUT)
    first, second = Processed(0, np.array([1, 1, 0, 1, 0, 0], np.uint8)), Processed(0, np.array([0, 1, 0, 0, 0, 1], np.uint8))
    counts, examples = checks.processed([first, second], given)
    assert counts == {"input": 5, "processed_zero": 2, "processed_once": 2, "more_than_once": 1, "processings": 5,
                      "input_copies": 0, "input_strays": 1, "processed_not_in_input": 1}
    assert examples == {"processed_zero": ["sequence 2 (input partition 0, offset 1)",
                                           "sequence 4 (input partition 0, offset 2)"],
                        "more_than_once": ["sequence 1 (input partition 1, offset 0)"]}
    assert checks.failures("commit-before", counts) == ["more_than_once"]
    assert checks.failures("commit-after", counts) == ["processed_zero"]
    assert checks.failures("auto-commit", counts) == []  # it promises neither


def test_a_copier_output_is_judged_exactly_once_against_the_input():
    given = checks.Input.read(0, 6, INPUT)
    checker = checks.copier_checker(0, given)
    # 0 and 2 copied, 2 twice, 4 missing, 1 and 3 copied in reverse order, 5 (not in the input) copied
    checker.feed(chunk([0, 2, 2], [0, 0, 0], [0, 1, 2]))
    checker.feed(chunk([3, 1, 5], [1, 1, 1], [0, 1, 2]))
    checker.confirm(())
    counts = checks.copied(checker.result())
    assert {name: counts[name] for name in ("input", "copied", "lost", "duplicated", "reordered",
                                            "copied_from_nowhere")} == {
        "input": 5, "copied": 4, "lost": 1, "duplicated": 1, "reordered": 1, "copied_from_nowhere": 1}
    assert checks.failures("copy", counts) == ["lost", "duplicated", "reordered", "copied_from_nowhere"]
    assert checker.missing().sequence.tolist() == [4] and np.flatnonzero(checker.copied(0)).tolist() == [2]


@pytest.mark.parametrize("fields, message", [
    ({"consumer_modes": ["commit-before"], "copier": True}, "not both"),
    ({"copier": True, "modes": ["sync"]}, "--modes: with --consumer-modes or --copier"),
    ({"consumer_modes": ["commit-after"], "acks": ["1"]}, "--acks: with --consumer-modes"),
    ({"process_ms": 2}, "--process-ms is the consumers' processing time"),
    ({"consumer_modes": ["exactly-once"]}, "consumer_modes"),
])
def test_bad_consumer_scenarios_say_what_is_wrong(fields, message):
    with pytest.raises(ValueError, match=message):
        DeliveryScenario(**fields)


def test_consumer_cells_are_one_per_mode_and_refuse_idle_members_and_a_transactional_id_of_their_own():
    cells = expand(DeliveryScenario(consumer_modes=["commit-before", "auto-commit"], clients=["confluent", "java"]))
    assert [cell.label for cell in cells] == ["commit-before rf3 isr1 confluent", "auto-commit rf3 isr1 confluent",
                                              "commit-before rf3 isr1 java", "auto-commit rf3 isr1 java"]
    assert all(cell.consuming and cell.settings.idempotence and cell.settings.acks == "all" for cell in cells)
    assert cells[0].describe(["kill-consumer"], 2) == "commit-before consumer, RF 3, min.insync 1, consumer killed 2x"
    assert expand(DeliveryScenario(copier=True))[0].describe([], 1) == "copier, RF 3, min.insync 1"
    with pytest.raises(ConfigError, match="--consumers 5 with 4 partitions: .* 1 would sit idle"):
        expand(DeliveryScenario(copier=True, consumers=5))
    with pytest.raises(ConfigError, match="a transactional.id of its own, new for each cell"):
        expand(DeliveryScenario(copier=True, overrides={"transactional.id": "mine"}))


def test_consumer_faults_parse_and_refuse_what_a_consumer_cannot_take():
    assert FaultSpec.parse("kill-consumer:2") == FaultSpec("kill-consumer", 2.0)
    assert FaultSpec.parse("kill-leader,of=output").option("of") == "output"
    for text, message in (("restart-consumer", "a consumer is killed or paused"),
                          ("partition-consumer:3", "a consumer is killed or paused"),
                          ("kill-leader,of=middle", "of=middle: input or output"),
                          ("kill-controller,of=output", "kill takes no options")):
        with pytest.raises(FaultSyntaxError, match=message):
            FaultSpec.parse(text)


def test_a_run_without_consumers_coordinator_or_output_refuses_faults_aimed_at_them():
    for fault, message in (("kill-consumer", "this run has no consumers"), ("kill-coordinator", "no coordinator"),
                           ("kill-leader,of=output", "only a copier has an output topic")):
        with pytest.raises(ConfigError, match=message):
            FaultRun.of(DeliveryScenario(faults=[fault]), FakeFaults(), "", "t")


class FakeMembers:
    def __init__(self):
        self.calls = []

    def aim(self, turn):
        return turn % 2 + 1

    def kill(self, slot):
        self.calls.append(("kill", slot))
        return f"consumer {slot}.1 killed (kill -9)"

    def replace(self, slot):
        self.calls.append(("replace", slot))

    def pause(self, slot):
        self.calls.append(("pause", slot))
        return f"consumer {slot}.1 paused (SIGSTOP)"

    def resume(self, slot):
        self.calls.append(("resume", slot))


def test_consumer_faults_hit_the_members_in_turn_and_the_coordinator_is_found_when_it_fires():
    members, faults = FakeMembers(), FakeFaults()
    run = FaultRun([FaultSpec("kill-consumer", 0.02), FaultSpec("kill-coordinator", 0.02),
                    FaultSpec("pause-consumer", 0.02)], faults, "", "t", bounces=3, every_s=0.05,
                   stage=Stage(members=members, coordinator=lambda: 2))
    run.start()
    wait_for(lambda: len(run.events) == 3 and run.events[-1].healed_s is not None, "the third fault to heal")
    events = run.stop()
    assert members.calls == [("kill", 1), ("replace", 1), ("pause", 2), ("resume", 2)]
    assert [(e.fault, e.broker, e.what) for e in events] == [
        ("kill-consumer", None, "consumer 1.1 killed (kill -9)"), ("kill-coordinator", 2, "broker 2 killed (kill -9)"),
        ("pause-consumer", None, "consumer 2.1 paused (SIGSTOP)")]


def test_java_string_hash_is_javas_so_the_coordinator_found_is_kafkas():
    # values of String.hashCode() in Java, made non-negative as Kafka's Utils.abs does
    assert [java_string_hash(text) for text in ("", "a", "hello", "polygenelubricants")] == [0, 97, 99162322, 0]
    assert java_string_hash("kafkabench") == 1940759242 and java_string_hash("é") == 233


def test_confluents_copier_is_told_what_its_transaction_backoff_costs_unless_it_was_set():
    from kafkabench.labs.delivery.run import _backoff_note

    copier = DeliveryScenario(copier=True, clients=["confluent", "java"])
    assert "retry.backoff.ms (100 ms)" in _backoff_note(expand(copier), copier)
    tuned = DeliveryScenario(copier=True, overrides={"retry.backoff.ms": "5"})
    assert _backoff_note(expand(tuned), tuned) is None
    java = DeliveryScenario(copier=True, clients=["java"])
    assert _backoff_note(expand(java), java) is None


def test_a_stall_bound_below_the_session_or_on_a_launcher_that_cannot_stop_a_process_is_refused_up_front():
    from types import SimpleNamespace

    from kafkabench.labs.delivery.consumers import CONSUMER_DEFAULTS
    from kafkabench.labs.delivery.stall_bound import check_stall_bound, stall_bound

    local, ray = (SimpleNamespace(launcher=SimpleNamespace(name=name)) for name in ("local", "ray"))
    with pytest.raises(ConfigError, match=r"--stall-bound 5 s is shorter than the consumers' session.timeout.ms \(6 s\)"):
        check_stall_bound(DeliveryScenario(copier=True, stall_bound=5), local, CONSUMER_DEFAULTS)
    with pytest.raises(ConfigError, match="with --launcher ray kafkabench cannot stop it"):
        check_stall_bound(DeliveryScenario(copier=True, stall_bound=30), ray, CONSUMER_DEFAULTS)
    given = DeliveryScenario(copier=True, stall_bound=10, consumer={"session.timeout.ms": "10000"})
    check_stall_bound(given, local, CONSUMER_DEFAULTS)  # at the session timeout: allowed
    assert stall_bound(given, local, CONSUMER_DEFAULTS) == 10
    assert stall_bound(DeliveryScenario(copier=True), local, CONSUMER_DEFAULTS) == 30  # 5 sessions of 6 s
    assert stall_bound(DeliveryScenario(copier=True), ray, CONSUMER_DEFAULTS) is None  # recorded, never replaced
    with pytest.raises(ValueError, match="--stall-bound replaces a stalled consumer or copier"):
        DeliveryScenario(stall_bound=30)


def test_the_headline_names_the_longest_stall_and_the_cells_given_up():
    from kafkabench.core.results import ResultDocument, Run
    from kafkabench.labs.delivery.report import headline, worst_stall

    def cell(client, liveness, **params):
        return Run(client=client, scenario="delivery", counters={"input": 10, "copied": 10},
                   params={"mode": "copy", "promise": "exactly once", "failures": [], "liveness": liveness, **params})

    calm = cell("java", [{"process": "copier 1.1", "longest_stall_s": 0.0, "stalls": 0}])
    stuck = cell("confluent", [{"process": "copier 2.1", "longest_stall_s": 31.04, "stalls": 2, "began_s": 45.0,
                                "ended_s": 76.0, "ended": "replaced"}], unfinished="nothing committed for 120 s")
    document = ResultDocument(lab="delivery", created_at="2026-11-28T10:00:00+00:00", runs=[calm, stuck])
    assert headline(document) == ("every consumer cell kept its promise (2 cell(s)); longest stall: 31.0 s, copier 2.1 "
                                  "(confluent), replaced; 1 cell(s) given up before the group committed the whole input")
    assert (worst_stall(calm), worst_stall(stuck), worst_stall(Run(client="x", scenario="delivery"))) == (
        "0", "31.0 s replaced", "-")


def test_a_failed_look_is_not_taken_for_one_and_the_next_asks_with_a_fresh_client(monkeypatch):
    import threading

    from kafkabench.errors import KafkaAdminError
    from kafkabench.consumers import watch

    answers = iter([{0: 5, 1: 0}, KafkaAdminError("the group's offsets: timed out"), {0: 2, 1: 0}, {0: 0, 1: 0}])
    clients, looks, done = [], [], threading.Event()

    class FakeLag:
        def __init__(self, *args, **kwargs) -> None:
            clients.append(self)

        def behind(self):
            answer = next(answers, None)
            if answer is None:
                done.set()
                return {0: 0, 1: 0}
            if isinstance(answer, Exception):
                raise answer
            return answer

        def close(self) -> None:
            pass

    class FakeGroup:
        def look(self, behind):
            looks.append(behind)

        def check(self):
            pass

    monkeypatch.setattr(watch, "GroupLag", FakeLag)
    monkeypatch.setattr(watch, "LOOK_S", 0.01)
    group_watch = watch.GroupWatch(FakeGroup(), None, "g", "t", 2)
    group_watch.start()
    assert done.wait(5)
    group_watch.stop()
    assert looks[:4] == [{0: 5, 1: 0}, None, {0: 2, 1: 0}, {0: 0, 1: 0}]  # the failed look judged nobody
    assert len(clients) == 2 and group_watch.problem == "the group's offsets: timed out"  # a fresh client after it
    assert group_watch.behind == {0: 0, 1: 0}


def test_a_duplicates_copies_are_named_by_where_and_when_they_were_written():
    assert checks.copies_text([(1, 871, 10_500), (1, 905, 17_100)], 2.0) == (
        "copied to output partition 1 at offsets 871 (8.5 s) and 905 (15.1 s)")
    assert checks.copies_text([(0, 3, 2_000), (2, 7, 3_000), (2, 9, 4_000)], 2.0) == (
        "copied to output partitions 0, 2 at offsets 3 (0.0 s), 7 (1.0 s) and 9 (2.0 s)")
    assert checks.copies_text([], 0.0) == "no copy found when read again"

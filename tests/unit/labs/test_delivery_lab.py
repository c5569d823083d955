"""The delivery lab's parts without a cluster: its cells, its faults' schedule (against fake faults), its tables
and verdicts from a result document."""

import threading
import time

import pytest

from kafkabench.core.results import ResultDocument, Run
from kafkabench.errors import ConfigError, KafkabenchError
from kafkabench.labs.delivery.cells import expand, fault_words
from kafkabench.faults.spec import FaultSpec
from kafkabench.labs.delivery.faults import FaultRun
from kafkabench.labs.delivery.report import headline, lines, stopwatch_table, verdict_table
from kafkabench.labs.delivery.run import check_request
from kafkabench.labs.delivery.scenario import DeliveryScenario
from kafkabench.waiting import wait_until


def test_cells_cross_every_axis_and_take_an_unset_axis_from_the_settings():
    cells = expand(DeliveryScenario(clients=["confluent", "java"], modes=["sync", "async-sleep:4000"], acks=["1", "all"]))
    assert len(cells) == 8
    assert {cell.settings.idempotence for cell in cells} == {False} and {c.settings.min_isr for c in cells} == {1}
    assert [cell.sleep_ms for cell in cells if cell.mode.startswith("async-sleep")] == [4000] * 4
    from_settings = expand(DeliveryScenario(producer={"acks": "-1", "enable.idempotence": "true"},
                                            topic_config={"min.insync.replicas": "2"}))
    assert {(c.settings.acks, c.settings.idempotence, c.settings.min_isr) for c in from_settings} == {("all", True, 2)}


def test_an_axis_and_a_setting_for_the_same_knob_are_refused_and_bad_values_named():
    with pytest.raises(ConfigError, match="sets acks, which this lab sets per cell from --acks"):
        expand(DeliveryScenario(acks=["1"], overrides={"acks": "all"}))
    with pytest.raises(ConfigError, match="enable.idempotence=maybe: must be true or false"):
        expand(DeliveryScenario(producer={"enable.idempotence": "maybe"}))
    with pytest.raises(ConfigError, match="the delivery lab runs Kafka clients"):
        expand(DeliveryScenario(clients=["http"]))


def test_transactions_make_the_producer_idempotent_with_acks_all_and_refuse_what_kafka_would():
    cells = expand(DeliveryScenario(clients=["confluent", "java"], transactions=50, abort_ratio=0.2))
    assert {(c.settings.acks, c.settings.idempotence) for c in cells} == {("all", True)}
    for fields, said in (({"acks": ["1"]}, "--transactions needs acks=all (Kafka refuses a transactional producer "
                                           "without it), not 1"),
                         ({"idempotence": ["off"]}, "--transactions needs idempotence on"),
                         ({"producer": {"enable.idempotence": "false"}}, "--transactions needs idempotence on"),
                         ({"clients": ["confluent", "kafka-python"]}, "kafkabench drives transactions with confluent "
                                                                     "and java; not with kafka-python"),
                         ({"overrides": {"transactional.id": "mine"}}, "gives each producer a transactional.id of its "
                                                                       "own")):
        with pytest.raises(ConfigError, match=said.replace("(", r"\(").replace(")", r"\)")):
            expand(DeliveryScenario(transactions=50, **fields))
    assert expand(DeliveryScenario(transactions=50, acks=["all"], idempotence=["on"]))


@pytest.mark.parametrize("fields, message", [
    ({"abort_ratio": 0.2}, "--abort-ratio aborts transactions: give --transactions too"),
    ({"transactions": 10, "abort_ratio": 1}, "abort_ratio\n.*less than 1"),
    ({"modes": ["async-sleep"]}, "async-sleep:MS"), ({"modes": ["async-sleep:0"]}, "must be one of"),
    ({"faults": ["kill-broker"]}, "the target is leader, follower, controller, coordinator, consumer or a node id"),
    ({"faults": ["restart-leader:3"]}, "takes no duration"), ({"faults": ["loss-leader:3"]}, "loss needs percent="),
    ({"faults": ["delay-leader,ms=50,jitter=80"]}, "jitter from 0 to it"),
    ({"faults": ["partition-leader,from=friends"]}, "cut from followers, controllers"),
    ({"fault_at": 2, "fault_after": 10}, "not both"), ({"rate": 0}, "rate\n.*must be a finite number > 0"),
    ({"bounce_every": 2, "bounce_after_heal": 1}, "--bounce-every or --bounce-after-heal, not both"),
    ({"end_after_heal": 1}, "--end-after-heal ends the sending after the faults: give --fault or --operation too"),
    ({"end_after_heal": 1, "faults": ["kill-leader"], "compare_apache": True}, "VerifiableProducer sends its whole"),
    ({"end_after_heal": -1, "faults": ["kill-leader"]}, "end_after_heal\n.*greater than or equal to 0"),
])
def test_bad_scenarios_say_what_is_wrong(fields, message):
    with pytest.raises(ValueError, match=message):
        DeliveryScenario(**fields)


def test_faults_are_said_in_words_by_their_turns():
    assert fault_words(["kill-leader:2", "pause-leader"], 3) == ["leader killed 2x", "leader paused 1x"]
    assert fault_words(["kill-controller"], 1) == ["controller killed 1x"] and fault_words([], 5) == []
    assert fault_words(["kill-leader:2", "rolling-restart,kill"], 3) == ["leader killed 2x", "rolling-restart,kill 1x"]


def test_an_operation_takes_a_faults_turn_and_its_steps_and_the_partitions_unavailability_are_said():
    from kafkabench.core.results import Run
    from kafkabench.labs.delivery.report import fault_texts
    from kafkabench.operations.spec import OperationSpec

    run = FaultRun([FaultSpec("kill-leader", 0.05), OperationSpec.parse("elect-leaders")], FakeFaults(), "", "t",
                   bounces=2, every_s=60)
    assert run.coverage() == "0 of 2 planned faults and operations fired"
    said = fault_texts(Run(client="java", scenario="delivery", params={"effective_min_isr": 2, "faults": [
        {"fault": "rolling-restart", "planned_s": 1.0, "fired_s": 1.0, "healed_s": 9.5, "error": None, "broker": None,
         "what": "broker(s) 1, 2 restarted in turn (controlled shutdown), each back in every ISR of t before the next",
         "steps": [{"broker": 1, "stop_s": 1.0, "serving_s": 3.0, "in_isr_s": 4.0},
                   {"broker": 2, "stop_s": 4.0, "serving_s": 8.0, "in_isr_s": 9.5}]}],
        "unavailable": {"look_s": 0.2, "looks": 60, "failed_looks": 2, "partitions": {
            "0": {"leaderless_s": 0.0, "under_min_isr_s": 0.0}, "1": {"leaderless_s": 0.4, "under_min_isr_s": 1.2},
            "2": {"leaderless_s": 1.6, "under_min_isr_s": 0.0}}}}))
    assert said == [
        "broker(s) 1, 2 restarted in turn (controlled shutdown), each back in every ISR of t before the next at 1.0 s, "
        "done at 9.5 s; broker 1 stopped 1.0 s, serving 3.0 s, back in every ISR 4.0 s; broker 2 stopped 4.0 s, "
        "serving 8.0 s, back in every ISR 9.5 s",
        "the topic's partitions, looked at every 0.2 s (60 looks, 2 of them unanswered): without a leader: [2] 1.6 s, "
        "[1] 0.4 s; under min.insync.replicas 2: [1] 1.2 s"]
    assert FaultSpec.parse("pause-leader:1.5") == FaultSpec("pause-leader", 1.5)
    assert FaultSpec.parse("restart-leader").down_s is None and FaultSpec.parse("kill-follower").down_s == 3.0
    check_request(DeliveryScenario(faults=["kill-follower:0.5"]))


class FakeFaults:
    """Brokers 1..3, broker 1 leads; every call recorded with the time it came."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, int, float]] = []
        self.start = time.monotonic()

    def _note(self, what: str, broker: int) -> None:
        self.calls.append((what, broker, time.monotonic() - self.start))

    def leader_of(self, topic, partition=0):
        return 1

    def kill(self, broker_id):
        self._note("kill", broker_id)

    def pause(self, broker_id):
        self._note("pause", broker_id)

    def resume(self, broker_id):
        self._note("resume", broker_id)

    def restart(self, *broker_ids):
        if broker_ids == (3,):
            raise KafkabenchError("broker 3 did not come back")
        self._note("restart", broker_ids[0])

    def controllers(self):
        return [101]

    def broker_ids(self):
        return [1, 2, 3]

    def node_ids(self):
        return [1, 2, 3, 101]

    healthy_after: float | None = 0.0  # seconds from a restart until the topic is back to its full ISR; None: never

    def wait_healthy(self, timeout_s, topics=None):
        """Bounded by `timeout_s` like the real one, and waiting on the (simulated) heal itself."""
        restarted = [at for what, _, at in self.calls if what in ("restart", "resume")]
        if not restarted:
            return
        healed = threading.Event()
        if self.healthy_after is not None:
            due = restarted[-1] + self.healthy_after - (time.monotonic() - self.start)
            threading.Timer(max(0.0, due), healed.set).start()
        if not healed.wait(timeout_s):
            raise KafkabenchError("t[0] is under-replicated (isr 1 of replicas 1,2)")


def wait_for(condition, what: str = "the fault thread to get there") -> None:
    """The fault thread gets there in well under a second; the bound only ends a test that hangs."""
    wait_until(condition, timeout_s=30, what=what, interval_s=0.01)


def test_faults_take_turns_heal_after_their_duration_and_are_recorded():
    faults = FakeFaults()
    run = FaultRun([FaultSpec("kill-leader", 0.05), FaultSpec("pause-leader", 0.05)], faults, "", "t", bounces=3,
                   every_s=0.1, at_s=0.02)
    run.start()
    wait_for(lambda: len(run.events) == 3 and run.events[-1].healed_s is not None, "the third fault to heal")
    assert run.done.wait(10)  # the schedule is over: what --end-after-heal waits for
    events = run.stop()
    assert [(e.fault, e.broker, e.planned_s) for e in events] == [("kill-leader", 1, 0.02), ("pause-leader", 1, 0.12),
                                                                  ("kill-leader", 1, 0.22)]
    assert [call[0] for call in faults.calls] == ["kill", "restart", "pause", "resume", "kill", "restart"]
    for event in events:
        # the times are kept in whole ms: 0.071 - 0.021 is 0.04999... in floats, so the gap is compared in ms too
        assert event.planned_s <= event.fired_s < event.healed_s and round(event.healed_s - event.fired_s, 3) >= 0.05
        assert event.error is None


def test_stopping_heals_at_once_and_marks_what_never_fired_and_a_failed_heal_is_an_error_not_a_crash():
    faults = FakeFaults()
    faults.leader_of = lambda topic, partition=0: 3  # whose restart fails
    run = FaultRun([FaultSpec("kill-leader", 30)], faults, "", "t", bounces=3, every_s=60, at_s=0)
    run.start()
    wait_for(lambda: faults.calls, "the first kill")
    assert not run.done.is_set()  # a fault is down and two are to come
    begun = time.monotonic()
    events = run.stop()
    # cut short: a stop that waited out the 30 s down time would take all of it; a loaded machine wakes the thread
    # and joins it in far less than half of that
    assert time.monotonic() - begun < 15
    assert events[0].broker == 3 and events[0].error == "broker 3 did not come back" and events[0].healed_s is None
    assert [e.fired_s for e in events[1:]] == [None, None]
    assert events[1].error.startswith("not fired: the run ended at ")
    assert events[1].error.endswith(" s, while the kill-leader before it was in progress")
    assert events[2].error.endswith(" s, before its turn")
    assert run.coverage() == "1 of 3 planned faults fired"
    assert run.shortfall().startswith("1 of 3 planned faults fired (--faults-must-fire): kill-leader not fired: ")


def test_a_fault_that_did_not_heal_blocks_the_rest_with_why():
    faults = FakeFaults()
    faults.leader_of = lambda topic, partition=0: 3  # whose restart fails
    run = FaultRun([FaultSpec("kill-leader", 0.01)], faults, "", "t", bounces=2, every_s=0.05, at_s=0)
    run.start()
    wait_for(lambda: run._thread and not run._thread.is_alive())
    assert run.done.is_set()  # no fault can fire any more: over too
    events = run.stop()
    assert events[1].error == ("not fired: the cluster had not healed from kill-leader of broker 3: broker 3 did not "
                               "come back")
    assert run.fired() == 1 and run.coverage() == "1 of 2 planned faults fired"


def test_no_leader_to_kill_is_a_fault_not_fired_and_the_next_goes_on():
    faults = FakeFaults()
    leaders = iter([None, 1])
    faults.leader_of = lambda topic, partition=0: next(leaders)
    run = FaultRun([FaultSpec("kill-leader", 0.01)], faults, "", "t", bounces=2, every_s=0.05, at_s=0)
    run.start()
    wait_for(lambda: len(run.events) == 2 and run.events[1].healed_s is not None)
    events = run.stop()
    assert (events[0].fired_s, events[0].error) == (None, "not fired: t[0] has no leader to kill")
    assert events[1].fired_s is not None and run.coverage() == "1 of 2 planned faults fired"


def test_the_next_bounce_waits_for_the_heal_and_the_full_isr_then_its_seconds():
    faults = FakeFaults()
    faults.healthy_after = 0.3
    run = FaultRun([FaultSpec("kill-leader", 0.05)], faults, "", "t", bounces=2, every_s=60, at_s=0, after_heal_s=0.1)
    run.start()
    wait_for(lambda: len(run.events) == 2 and run.events[1].healed_s is not None, "the second fault to heal")
    events = run.stop()
    # from the restart to the next kill, both on the fakes' clock: the ISR's 0.3 s counts from the restart itself, so
    # a thread slowed between the restart and its healed_s cannot shrink the gap; the upper bound is half of
    # --bounce-every's 60 s, far above what a loaded machine adds
    at = {name: [t for what, _, t in faults.calls if what == name] for name in ("kill", "restart")}
    gap = at["kill"][1] - at["restart"][0]
    assert 0.4 <= gap < 30, gap
    assert events[0].healed_s <= events[1].fired_s
    assert run.coverage() == "2 of 2 planned faults fired" and run.shortfall() is None


def test_a_topic_that_never_heals_blocks_the_next_bounce_within_the_heal_timeout():
    faults = FakeFaults()
    faults.healthy_after = None
    run = FaultRun([FaultSpec("kill-leader", 0.01)], faults, "", "t", bounces=2, every_s=5, at_s=0, after_heal_s=0.1,
                   heal_timeout_s=0.5)
    run.start()
    wait_for(lambda: run._thread and not run._thread.is_alive())
    events = run.stop()
    assert events[1].error.startswith("not fired: the cluster had not healed from kill-leader of broker 1 within "
                                      "0.5 s: t[0] is under-replicated")


def test_a_run_that_ends_before_the_count_says_how_far_it_got():
    faults = FakeFaults()
    run = FaultRun([FaultSpec("kill-leader", 0.01)], faults, "", "t", bounces=1, every_s=1, after=100,
                   acknowledged=lambda: 40)
    run.start()
    wait_for(lambda: "40 of the 100" in run._waiting)
    (event,) = run.stop()
    assert event.error.startswith("not fired: the run ended at ")
    assert event.error.endswith(" s, with 40 of the 100 acknowledged messages it waited for")


def test_a_count_trigger_waits_for_the_producer():
    faults, acknowledged, asked = FakeFaults(), [0], []
    run = FaultRun([FaultSpec("kill-controller", 0.01)], faults, "", "t", bounces=1, every_s=1, after=100,
                   acknowledged=lambda: asked.append(None) or acknowledged[0])
    run.start()
    started = time.monotonic()  # at or after the run's own start
    wait_for(lambda: len(asked) >= 3, "the fault thread to ask for the count three times")
    assert faults.calls == []  # it looked, the count was short: nothing fired
    released_s = time.monotonic() - started
    acknowledged[0] = 100
    wait_for(lambda: run.events and run.events[0].healed_s is not None, "the fault to fire and heal")
    (event,) = run.stop()
    # planned when the count was reached, not at the run's start (planned_s is rounded to the millisecond)
    assert event.broker == 101 and event.planned_s >= round(released_s, 3) - 0.001 and event.healed_s is not None


def run_of(mode: str, counters: dict, **params) -> Run:
    verdict = {"sent": 100, "acknowledged": 100, "failed": 0, "unknown": 0, "read": 100, "foreign": 0, "strays": 0,
               "distinct_read": 100, "lost": 0, "unconfirmed_misses": 0, "duplicated": 0, "duplicated_ids": 0,
               "reordered": 0, "delivered_despite_error": 0, "unknown_found": 0, "unknown_not_found": 0,
               "offset_mismatch": 0, **counters}
    return Run(client="confluent", scenario="delivery", counters=verdict,
               params={"settings": f"{mode}, acks=1, RF 3, min.insync 1", "mode": mode, "loss_confirmed": True,
                       "idempotent": False, **SETTINGS, **params},
               timings={"single_1_ms": 1.5, "single_2_ms": 0.5, "bulk_ms": 20.0, "ending_ms": 4.0, "ms_per_event": 0.26})


SETTINGS = {"acks": "1", "idempotence": "off", "replication_factor": 3, "effective_min_isr": 1}


def column(table, name: str) -> list[str]:
    index = [c.name for c in table.columns].index(name)
    return [row.cells[index] for row in table.rows]


def test_tables_and_verdicts_come_from_the_counts():
    document = ResultDocument(lab="delivery", created_at="2026-11-24T00:00:00+00:00", params={"count": 100}, runs=[
        run_of("sync", {}, process_end="closed and exited (0) 0.1 s after its result"),
        run_of("async-close", {"lost": 12, "read": 88, "distinct_read": 88},
               faults=[{"fault": "kill-leader", "broker": 2, "planned_s": 1.0, "fired_s": 1.01, "healed_s": 9.5,
                        "error": None},
                       {"fault": "kill-leader", "broker": None, "planned_s": None, "fired_s": None, "healed_s": None,
                        "error": "not fired: the run ended at 9.2 s, while the kill-leader before it was in progress"}],
               faults_planned=2, faults_fired=1, fault_coverage="1 of 2 planned faults fired"),
        Run(client="confluent", scenario="delivery", params={"settings": "async-close, acks=1, idempotent", "refused": True,
                                                             "mode": "async-close", **SETTINGS, "idempotence": "on"},
            error="confluent (librdkafka) rejects the producer settings: ..."),
    ])
    table = verdict_table(document)
    # a column per setting that differs between cells; the shared ones are said in the title
    assert [c.name for c in table.columns][:3] == ["mode", "idem", "faults"] and "acks 1, RF 3, ISR 1" in table.title
    assert column(table, "faults") == ["none", "leader killed 2x", "none"]
    assert column(table, "lost") == ["0", "12", "-"]
    assert [row.kind for row in table.rows] == ["", "error", "dominated"]
    assert column(table, "delivered %")[1] == "88.00"
    said = lines(document)
    assert said[0] == "sync, acks=1, RF 3, min.insync 1 (confluent): 0 lost: all 100 acknowledged messages read back"
    assert ("async-close, acks=1, RF 3, min.insync 1 (confluent): 12 acknowledged messages lost (12.00 %); 1 of 2 "
            "planned faults fired") in said
    assert "async-close, acks=1, RF 3, min.insync 1 (confluent): kill-leader (broker 2) at 1.0 s, healed at 9.5 s" in said
    assert ("async-close, acks=1, RF 3, min.insync 1 (confluent): kill-leader: not fired: the run ended at 9.2 s, "
            "while the kill-leader before it was in progress") in said
    assert any("rejects the producer settings" in line for line in said)
    assert headline(document) == ("acknowledged messages lost in 1 of 2 cell(s); most: async-close, acks=1, RF 3, "
                                  "min.insync 1 (confluent): 12 of 100; fewer faults fired than planned in 1 cell(s)")
    stopwatch = stopwatch_table(document)
    assert [c.name for c in stopwatch.columns][2:4] == ["send 0", "send 1"]  # after mode and faults
    assert stopwatch.rows[0].cells[2:7] == ["1.500", "0.500", "20.0", "4.0", "0.2600"]

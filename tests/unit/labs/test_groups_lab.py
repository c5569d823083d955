"""The groups lab before any process starts: its changes read in the faults' grammar, each refused in one line; the
protocols as each client is told them; and the figures read from recorded states and lag."""

import pytest
from pydantic import ValidationError

from kafkabench.admin import GroupState
from kafkabench.faults.spec import FaultSpec
from kafkabench.labs.groups.changes import ChangeSpec, ChangeSyntaxError
from kafkabench.labs.groups.figures import lag_figures, time_to_stable, transitions
from kafkabench.labs.groups.protocols import PROTOCOLS
from kafkabench.labs.groups.scenario import GroupsScenario


@pytest.mark.parametrize("text, kind, count, seconds", [
    ("rolling-restart", "rolling-restart", 0, ("pause", 1.0)),
    ("rolling-restart,pause=2.5", "rolling-restart", 0, ("pause", 2.5)),
    ("crash:2,down=5", "crash", 2, ("down", 5.0)),
    ("crash:1", "crash", 1, ("down", 3.0)),
    ("pause:2,down=40", "pause", 2, ("down", 40.0)),
    ("scale-out:3", "scale-out", 3, None),
    ("scale-in:1", "scale-in", 1, None),
    ("add-partitions:6", "add-partitions", 6, None),
    ("subscribe-topic", "subscribe-topic", 0, None),
    ("subscribe-topic:12", "subscribe-topic", 12, None),
    ("none", "none", 0, None),
])
def test_changes_read_in_the_faults_grammar(text, kind, count, seconds):
    spec = ChangeSpec.parse(text)
    assert (spec.kind, spec.count) == (kind, count)
    if seconds:
        assert spec.seconds(seconds[0]) == seconds[1]


@pytest.mark.parametrize("text, said", [
    ("restart-all", "changes are rolling-restart, crash, pause, scale-out, scale-in, add-partitions, subscribe-topic, "
                    "none"),
    ("subscribe-topic:0", "subscribe-topic takes the new topic's partitions, a whole number >= 1"),
    ("subscribe-topic,pause=1", "subscribe-topic takes no options"),
    ("pause:1,pause=2", "pause takes down, not 'pause'"),
    ("none:2", "none takes no count"),
    ("add-partitions", "add-partitions needs how many partitions"),
    ("crash", "crash needs how many members"),
    ("crash:0", "crash needs how many members"),
    ("rolling-restart:2", "takes no count"),
    ("crash:1,pause=2", "crash takes down, not 'pause'"),
    ("scale-out:1,down=2", "scale-out takes no options"),
    ("rolling-restart,pause=soon", "pause is seconds"),
])
def test_a_change_kafkabench_cannot_read_is_one_line_saying_what_works(text, said):
    with pytest.raises(ChangeSyntaxError, match=said):
        ChangeSpec.parse(text)


def test_faults_still_read_as_before_through_the_shared_grammar():
    spec = FaultSpec.parse("partition-leader:40,from=followers+controllers")
    assert (spec.kind, spec.down_s, spec.options) == ("partition-leader", 40.0, (("from", "followers+controllers"),))


@pytest.mark.parametrize("given, said", [
    ({"changes": ["scale-in:5"], "members": 3}, "scale-in takes at most 2"),
    ({"changes": ["crash:4"], "members": 3}, "crash takes at most 3"),
    ({"changes": ["pause:4"], "members": 3}, "pause takes at most 3"),
    ({"changes": ["scale-in:3"], "members": 3}, "scale-in takes at most 2"),
    ({"changes": ["add-partitions:9995"], "partitions": 6}, "6 \\+ 9,995 partitions; a cell's topic takes at most 10,000"),
    ({"clients": ["aiokafka"], "protocols": ["consumer"]}, "aiokafka speaks the classic protocol only"),
    ({"clients": ["kafka-python"], "protocols": ["cooperative"]}, "kafka-python speaks the classic protocol only"),
    ({"protocols": ["sticky"]}, "protocols"),
    ({"rate": -1}, "steady producer"),
    ({"count": 2_000, "rate": 1_000, "change_at": 4}, "written in 2 s, before the change begins"),
    ({"protocols": ["eager", "consumer"], "overrides": {"session.timeout.ms": "6000"}},
     "session.timeout.ms: the classic protocol's settings, which a KIP-848 member refuses \\(consumer\\)"),
    ({"overrides": {"partition.assignment.strategy": "range"}}, "--protocols sets the protocol and the assignor"),
    ({"group_type": "share", "protocols": ["consumer"]}, "--protocols: a share group has no rebalance protocol"),
    ({"group_type": "share", "clients": ["java", "aiokafka"]}, "aiokafka has no share consumer"),
    ({"lock_s": 20}, "--lock-s is a share group's lock"),
])
def test_a_request_that_cannot_run_is_refused_before_any_process_starts(given, said):
    with pytest.raises(ValidationError, match=said):
        GroupsScenario(**given)


def test_a_share_group_runs_one_cell_per_client_and_change_with_share_consumers_told_the_group_alone():
    scenario = GroupsScenario(group_type="share", clients=["confluent", "java"], changes=["crash:1", "none"], lock_s=15)
    assert scenario.cell_protocols == ["share"]
    assert GroupsScenario().cell_protocols == ["eager", "consumer"]
    from kafkabench.labs.groups.protocols import named

    assert named("share").share and named("share").settings("java", "g", 1) == {}
    assert ChangeSpec.parse("none").member_slots == ChangeSpec.parse("pause:2").member_slots == 0


def test_each_protocol_as_each_client_is_told_it():
    assert PROTOCOLS["eager"].settings("confluent", "g", 1) == {"librdkafka:partition.assignment.strategy": "range"}
    assert PROTOCOLS["cooperative"].settings("java", "g", 1) == {
        "partition.assignment.strategy": "org.apache.kafka.clients.consumer.CooperativeStickyAssignor"}
    assert PROTOCOLS["consumer-range"].settings("java", "g", 2) == {"group.protocol": "consumer",
                                                                     "group.remote.assignor": "range"}
    assert PROTOCOLS["static"].settings("kafka-python", "g", 2) == {"group.instance.id": "g-member-2"}
    assert PROTOCOLS["consumer-static"].settings("confluent", "g", 3)["group.instance.id"] == "g-member-3"


def state(name, members=3, reconciling=0, protocol="CLASSIC"):
    return GroupState(name, members, reconciling, protocol)


def test_stable_again_is_when_the_coordinator_last_became_stable_after_the_change_began():
    states = [(9.0, state("STABLE")), (10.1, state("PREPARING_REBALANCING", 2)), (10.5, state("STABLE")),
              (11.0, state("PREPARING_REBALANCING")), (12.4, state("STABLE")), (13.0, state("STABLE"))]
    assert time_to_stable(states, begun=10.0) == pytest.approx(2.4)
    assert time_to_stable(states[:1] + states[-1:], begun=10.0) == 0.0  # it never left stable
    assert time_to_stable(states[:-2], begun=10.0) is None  # not stable when last asked
    reconciling = [(10.2, state("UNKNOWN", reconciling=1, protocol="CONSUMER")), (10.9, state("STABLE", protocol="CONSUMER"))]
    assert time_to_stable(reconciling, begun=10.0) == pytest.approx(0.9)
    assert transitions(reconciling, begun=10.0) == ["+0.2 s: ASSIGNING or RECONCILING (1 reconciling), 3 members",
                                                    "+0.9 s: STABLE, 3 members"]


def test_lag_peaks_after_the_change_and_is_back_once_at_its_steady_peak():
    looks = [(8.0, 30), (9.0, 50), (10.5, 400), (11.5, 900), (12.5, 200), (13.5, 45)]
    assert lag_figures(looks, begun=10.0) == {"lag_peak": 900, "lag_peak_steady": 50, "lag_back_s": 3.5}
    assert "lag_back_s" not in lag_figures(looks[:-1], begun=10.0)


def test_the_chart_draws_each_partitions_records_per_window_with_the_change_marked():
    import numpy as np

    from kafkabench.labs.groups.charts import processed_chart
    from kafkabench.labs.groups.figures import ChangeTimes, per_partition
    from kafkabench.labs.groups.gaps import Processings

    ms = 1_000_000
    # partition 0 read at 0..0.9 s, partition 1 at 0..0.3 s then again from 0.8 s: the change ran from 0.35 to 0.75 s
    at = np.array([0, 100, 200, 300, 400, 500, 600, 700, 800, 900, 0, 100, 200, 300, 800, 900]) * ms + 10**18
    processings = Processings(np.array([0] * 10 + [1] * 6), at, at)
    change = ChangeTimes(begun_mono=5.0, begun_ns=10**18 + 350 * ms, ended_mono=5.4)
    processed = per_partition(processings, change)
    assert processed["window_s"] == 0.1 and processed["change_s"] == [0.35, 0.75]
    assert processed["counts"] == [[1] * 10, [1, 1, 1, 1, 0, 0, 0, 0, 1, 1]]
    chart = processed_chart({"id": "r1", "runs": [{"label": "crash:1 eager (java)", "params": {
        "processed": processed, "change": "crash:1"}}]})
    heatmap = chart["figure"]["data"][0]
    assert heatmap["type"] == "heatmap" and heatmap["z"] == processed["counts"]
    assert chart["figure"]["layout"]["shapes"][0]["x0"] == 0.35


def test_new_partitions_are_timed_from_their_first_record_and_one_never_read_is_named():
    import numpy as np

    from kafkabench.core.results import Run
    from kafkabench.labs.groups.figures import first_reads
    from kafkabench.labs.groups.gaps import NS, Processings
    from kafkabench.labs.groups.report import lines

    # partitions 0-1 before the change, 2-3 added: 2's first record (created at 10 s) processed at 12.5 s, a later
    # one at 13 s; 3 written to and never read
    created = np.array([1, 2, 10, 11]) * NS
    processings = Processings(np.array([0, 1, 2, 2]), np.array([1.1, 2.1, 12.5, 13.0]) * NS, created)
    run = Run(client="java", scenario="add-partitions:2 eager",
              params={"change": "add-partitions:2", "protocol": "eager", "partitions": 2, "partitions_after": 4})
    assert first_reads(processings, np.array([0, 1, 2, 2, 3]), 2) == {2: 2.5, 3: None}
    run.params["new_partitions_s"] = {"2": 2.5, "3": None}
    said = lines(type("Document", (), {"runs": [run]})())
    assert "add-partitions:2 under eager (java): 2 partition(s) added: 1 of the 2 new partition(s) written to never " \
           "read within the run ([3])" in "\n".join(said)
    assert first_reads(processings, np.array([0, 1, 2, 2]), 2) == {2: 2.5}
    assert ChangeSpec.parse("add-partitions:2").member_slots == 0 and ChangeSpec.parse("crash:2").member_slots == 2


def test_a_long_list_of_unread_new_partitions_names_ten_and_counts_the_rest():
    from kafkabench.labs.groups.report import _first_reads

    said = _first_reads("12 partition(s) added", {str(p): None for p in range(2, 14)}, None)
    assert said.startswith("12 partition(s) added: 12 of the 12 new partition(s) written to never read within the run ([2, 3, 4, 5, 6, 7, 8, "
                           "9, 10, 11, ... 2 more in result.json])")


def test_redelivery_is_read_from_the_delivery_counts_the_histories_stored(tmp_path):
    import numpy as np

    from kafkabench.core.delivery_processed import Processed
    from kafkabench.core.results import Run
    from kafkabench.labs.groups.figures import redeliveries
    from kafkabench.labs.groups.report import lines

    begun = 10**18
    # 6 records; a member killed holding 2, 3 and 4 (it processed 2); the others got them again at delivery count 2.
    # Record 5 came at 3 with only one process having seen it: two deliveries no member's application received.
    killed, other = (Processed.create(tmp_path / name, 0, 6, delivered=True) for name in ("consumer-1.1", "consumer-2.1"))
    killed.record_delivered(np.array([2, 3, 4]), np.array([1, 1, 1]))
    killed.record(2, begun - 10**8, 0)
    other.record_delivered(np.array([0, 1, 2, 3, 4, 5]), np.array([1, 1, 2, 2, 2, 3]))
    for sequence, at_s in ((0, -1), (1, -1), (2, 1.5), (3, 2.0), (4, 2.5), (5, 3.0)):
        other.record(sequence, begun + int(at_s * 1e9), 0)
    histories = [Processed.open(tmp_path / name) for name in ("consumer-1.1", "consumer-2.1")]
    acked = np.array([True] * 6)
    run = Run(client="java", scenario="crash:1 share", params={"change": "crash:1", "protocol": "share"},
              counters={"records": 6, "never_processed": 0, "processed_twice": 1})
    redeliveries(run, histories, acked, begun)
    assert run.params["delivery_counts"] == {"1": 2, "2": 3, "3": 1}
    assert (run.counters["redelivered"], run.counters["deliveries_unseen"]) == (4, 2)
    assert (run.timings["redelivered_first_s"], run.timings["redelivered_median_s"],
            run.timings["redelivered_last_s"]) == (1.5, 2.25, 3.0)
    said = "\n".join(lines(type("Document", (), {"runs": [run]})()))
    assert "4 records redelivered (delivery counts: 2 at 1, 3 at 2, 1 at 3), processed again 1.5-3.0 s" in said
    assert "the broker counted 2 deliveries no member process received" in said
    redeliveries(consumer := Run(client="java", scenario="x"), [Processed.create(tmp_path / "c", 0, 6)], acked, begun)
    assert "delivery_counts" not in consumer.params  # a consumer group's members store no delivery counts


def test_a_share_groups_start_is_timed_from_the_first_records_timestamp_to_the_last_members_first_processing(tmp_path):
    from types import SimpleNamespace

    from kafkabench.core.delivery_processed import Processed
    from kafkabench.core.results import Run
    from kafkabench.labs.groups.figures import all_reading

    # the first record written at t0 (ms); member 1 processed records from t0 + 0.4 s, member 2 its first at t0 + 3.25 s
    # and one of them again later: the start is the later of the two first processings
    t0_ms = 1_700_000_000_000
    one, two = (Processed.create(tmp_path / name, 0, 4) for name in ("consumer-1.1", "consumer-2.1"))
    one.record(0, (t0_ms + 400) * 10**6, t0_ms)
    one.record(1, (t0_ms + 900) * 10**6, t0_ms + 5)
    two.record(2, (t0_ms + 3_250) * 10**6, t0_ms + 10)
    two.record(3, (t0_ms + 9_000) * 10**6, t0_ms + 15)
    members = [SimpleNamespace(history_dir=tmp_path / name) for name in ("consumer-1.1", "consumer-2.1")]
    all_reading(run := Run(client="java", scenario="x"), members)
    assert run.timings["all_members_reading_s"] == 3.25
    Processed.create(tmp_path / "consumer-3.1", 0, 4)  # a member that processed nothing: no figure
    members.append(SimpleNamespace(history_dir=tmp_path / "consumer-3.1"))
    all_reading(idle := Run(client="java", scenario="x"), members)
    assert "all_members_reading_s" not in idle.timings


def test_a_share_groups_backlog_is_what_no_history_shows_processed(tmp_path):
    import numpy as np

    from kafkabench.consumers.backlog import HistoryBacklog
    from kafkabench.core.delivery_history import History
    from kafkabench.core.delivery_processed import Processed

    produced = History.mapped(tmp_path / "producer", 0, 5)
    produced.record_acks(np.arange(4), np.array([0, 1, 0, 1]), np.array([0, 0, 1, 1]))  # record 4 not acknowledged
    (tmp_path / "consumer-1.2").mkdir()  # a member still creating its files
    Processed.create(tmp_path / "consumer-1.1", 0, 5, delivered=True).record(0, 1, 0)
    backlog = HistoryBacklog(tmp_path, 3)
    assert backlog.behind() == {0: 1, 1: 2, 2: 0} and backlog.unstable() is None


@pytest.mark.parametrize("level, started_here, said", [
    (2, False, "share.version 2: share groups on"),
    (0, False, "share groups are off on this cluster \\(share.version 0\\): turn them on with `kafka-features.sh "
               "--bootstrap-server h:9092 upgrade --feature share.version=1`"),
    (0, True, "share.version was 0: kafkabench raised it to 1 on the cluster it runs"),
])
def test_share_groups_are_found_on_raised_on_a_cluster_kafkabench_runs_or_refused(monkeypatch, level, started_here, said):
    from types import SimpleNamespace

    from kafkabench.errors import ConfigError
    from kafkabench.labs.groups import share

    raised = []

    class Admin:
        def __init__(self, *args, **kwargs):
            pass

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return None

        def feature_level(self, name):
            assert name == "share.version"
            return level

    monkeypatch.setattr(share, "KafkaAdmin", Admin)
    monkeypatch.setattr(share.features, "set_level", lambda connection, name, to, timeout_s: raised.append((name, to)))
    target = SimpleNamespace(connection=None, started_here=started_here, bootstrap_servers="h:9092", kafka_version="4.1.2")
    notes = []
    listener = SimpleNamespace(note=notes.append)
    if level == 0 and not started_here:
        with pytest.raises(ConfigError, match=said):
            share.share_groups_on(target, listener)
        assert raised == []  # a cluster kafkabench does not run is never changed
        return
    assert share.share_groups_on(target, listener) == said
    assert raised == ([("share.version", 1)] if started_here else [])
    assert notes == ([said] if started_here else [])  # what it did is said as it happens


def test_a_pause_stops_the_first_members_and_resumes_them_after_down_seconds(monkeypatch):
    from kafkabench.labs.groups import run as groups_run

    calls, slept = [], []
    members = type("Members", (), {"pause": lambda self, slot: calls.append(("pause", slot)),
                                    "resume": lambda self, slot: calls.append(("resume", slot))})()
    monkeypatch.setattr(groups_run.time, "sleep", slept.append)
    groups_run.apply(ChangeSpec.parse("pause:2,down=40"), members, 3, lambda count: None)
    assert calls == [("pause", 1), ("pause", 2), ("resume", 1), ("resume", 2)] and slept == [40.0]

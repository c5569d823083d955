"""The operations' grammar, the checks before a run, a rolling restart's steps on a recorded cluster, and the
partitions' unavailable spans from recorded looks."""

import pytest

from kafkabench.cluster.faults import FaultsUnavailable
from kafkabench.errors import ConfigError
from kafkabench.operations.perform import check, perform
from kafkabench.operations.spec import OperationSpec, OperationSyntaxError
from kafkabench.partition_watch import spans


@pytest.mark.parametrize("text, kind, kill, pause", [
    ("rolling-restart", "rolling-restart", False, 0.0),
    ("rolling-restart,kill", "rolling-restart", True, 0.0),
    ("rolling-restart,kill,pause=2.5", "rolling-restart", True, 2.5),
    ("elect-leaders", "elect-leaders", False, 0.0),
    ("config,topic=min.insync.replicas=3", "config", False, 0.0),
])
def test_operations_read_in_the_faults_grammar(text, kind, kill, pause):
    spec = OperationSpec.parse(text)
    assert (spec.kind, spec.kill, spec.pause_s, spec.down_s) == (kind, kill, pause, None)
    assert spec.restarts == (kind == "rolling-restart")


@pytest.mark.parametrize("text, said", [
    ("restart-everything", "operations are rolling-restart, rolling-upgrade, elect-leaders, config, reassign, add-"),
    ("rolling-restart:3", "rolling-restart takes no number"),
    ("rolling-restart,kill=yes", "kill takes no value"),
    ("rolling-upgrade:4.4.0,back=1", "back takes no value"),
    ("rolling-restart,back", "rolling-restart takes kill, pause, not 'back'"),
    ("rolling-restart,pause=soon", "pause is seconds"),
    ("elect-leaders,kill", "elect-leaders takes no options, not 'kill'"),
    ("config", "config needs a setting: config,topic=KEY=VALUE or config,brokers=KEY=VALUE"),
    ("config,topic=min.insync.replicas", "topic= takes a setting, KEY=VALUE"),
    ("config,cluster=a=1", "config takes topic, brokers, not 'cluster'"),
])

def test_an_operation_kafkabench_cannot_read_is_one_line_saying_what_works(text, said):
    with pytest.raises(OperationSyntaxError, match=said):
        OperationSpec.parse(text)


def test_a_config_operation_names_its_settings_per_resource_and_keeps_the_dots_of_their_names():
    spec = OperationSpec.parse("config,topic=min.insync.replicas=3,topic=retention.ms=1000,brokers=log.cleaner.threads=2")
    assert spec.settings("topic") == {"min.insync.replicas": "3", "retention.ms": "1000"}
    assert spec.settings("brokers") == {"log.cleaner.threads": "2"} and not spec.restarts
    assert spec.label == "config,topic=min.insync.replicas=3,topic=retention.ms=1000,brokers=log.cleaner.threads=2"


class Recorded:
    """A cluster of brokers that records what was done to it, in order."""

    def __init__(self, brokers=(1, 2, 3), unavailable: bool = False) -> None:
        self.brokers, self.unavailable, self.done = list(brokers), unavailable, []

    def broker_ids(self):
        if self.unavailable:
            raise FaultsUnavailable("fault injection needs the embedded cluster")
        return self.brokers

    def kill(self, broker):
        self.done.append(("kill", broker))

    def restart(self, broker):
        self.done.append(("restart", broker))

    def wait_healthy(self, timeout_s, topics):
        self.done.append(("whole", tuple(topics)))


def test_restarts_need_the_embedded_cluster_and_two_brokers_and_an_election_needs_neither():
    with pytest.raises(ConfigError, match="rolling-restart restarts broker processes, which needs the embedded cluster"):
        check([OperationSpec.parse("rolling-restart")], Recorded(unavailable=True), "unused:9092")
    with pytest.raises(ConfigError, match="on a cluster of one broker leaves every partition without a leader"):
        check([OperationSpec.parse("rolling-restart,kill")], Recorded(brokers=[1]), "unused:9092")
    check([OperationSpec.parse("elect-leaders")], Recorded(unavailable=True), "unused:9092")  # the Admin API only


def test_a_rolling_restart_takes_each_broker_in_turn_and_waits_for_the_topic_to_be_whole_before_the_next():
    from kafkabench.partition_watch import Downs

    cluster, clock, down_clock = Recorded(), iter(range(100)), iter(range(100, 200))
    down = Downs(lambda: next(down_clock))
    done = perform(OperationSpec.parse("rolling-restart,kill"), cluster, "unused:9092", "t", lambda: next(clock), 60,
                   down=down)
    assert cluster.done == [("kill", 1), ("restart", 1), ("whole", ("t",)), ("kill", 2), ("restart", 2),
                            ("whole", ("t",)), ("kill", 3), ("restart", 3), ("whole", ("t",))]
    assert done.steps == [{"broker": 1, "stop_s": 0, "serving_s": 1, "in_isr_s": 2},
                          {"broker": 2, "stop_s": 3, "serving_s": 4, "in_isr_s": 5},
                          {"broker": 3, "stop_s": 6, "serving_s": 7, "in_isr_s": 8}]
    assert done.what == "broker(s) 1, 2, 3 restarted in turn (kill -9, no hand-over), each back in every ISR of t " \
                        "before the next"
    assert down.spans == [[1, 100, 101], [2, 102, 103], [3, 104, 105]]  # each killed broker down until it serves
    # a clean one stops no broker by signal of its own: the restart's graceful stop is the controlled shutdown
    cluster = Recorded(brokers=[1, 2])
    done = perform(OperationSpec.parse("rolling-restart"), cluster, "unused:9092", "t", lambda: 0.0, 60,
                   stopped=lambda: len(cluster.done) >= 2)  # the run ended after the first broker
    assert [step for step in cluster.done if step[0] != "whole"] == [("restart", 1)]
    assert done.what.endswith("(controlled shutdown), each back in every ISR of t before the next; the run ended "
                              "before broker(s) 2")


def isr(*brokers) -> frozenset:
    return frozenset(brokers)


def test_spans_without_a_leader_and_under_min_isr_run_from_the_first_look_that_saw_them_to_the_first_that_did_not():
    looks = [(0.0, {0: (1, isr(1, 2, 3)), 1: (2, isr(1, 2, 3))}),
             (0.2, {0: (None, isr()), 1: (2, isr(2, 3))}),  # 0 leaderless; 1 down to 2 in sync
             (0.4, {0: (-1, isr()), 1: (2, isr(2))}),  # -1: librdkafka's word for no leader; 1 under min.insync 2
             (0.6, {0: (3, isr(3)), 1: (2, isr(2, 3))}),
             (0.8, {0: (3, isr(3, 1)), 1: (None, isr())})]  # 1 leaderless at the last look: open until it
    found = spans(looks, min_isr=2)
    assert found[0]["leaderless"] == [[0.2, 0.6]] and found[0]["leaderless_s"] == 0.4
    assert found[0]["under_min_isr"] == [[0.2, 0.8]] and found[0]["under_min_isr_s"] == 0.6
    assert found[1]["leaderless"] == [[0.8, 0.8]] and found[1]["under_min_isr"] == [[0.4, 0.6], [0.8, 0.8]]
    assert found[1]["under_min_isr_s"] == 0.2
    assert spans([], 2) == {}


def test_a_broker_taken_down_counts_as_a_look_so_a_kill_between_answered_looks_is_not_missed():
    # broker 1 killed at 1.0 s; no look answered until 9.0 s, when the controller had fenced it and 2 led partition 0
    looks = [(0.8, {0: (1, isr(1, 2, 3)), 1: (2, isr(1, 2, 3))}),
             (9.0, {0: (2, isr(2, 3)), 1: (2, isr(2, 3))}),
             (9.2, {0: (2, isr(2, 3)), 1: (2, isr(2, 3))})]
    assert spans(looks, 3)[0]["leaderless"] == []  # the looks alone: never without a leader
    found = spans(looks, 3, downs=[(1, 1.0, 8.5), (3, 20.0, None)])  # a down after the last look adds nothing
    assert found[0]["leaderless"] == [[1.0, 9.0]] and found[1]["leaderless"] == []  # 1 was only 1's follower
    assert found[0]["under_min_isr"] == [[1.0, 9.2]] and found[1]["under_min_isr"] == [[1.0, 9.2]]
    assert spans(looks, 3, downs=[(1, 0.5, 0.7)])[0]["leaderless"] == []  # before the first look: nothing to go on


def test_downs_keep_when_each_broker_went_down_and_came_back():
    from kafkabench.partition_watch import Downs

    now = iter([1.0, 2.0, 3.0, 4.0])
    downs = Downs(lambda: next(now))
    downs.add(2)
    downs.add(2)  # already down: one span, not two
    downs.add(3)
    assert downs.now() == {2, 3}
    downs.discard(2)
    downs.discard(None)  # a fault that had no broker
    assert downs.now() == {3} and downs.spans == [[2, 1.0, 3.0], [3, 2.0, None]]


def test_a_leader_the_run_took_down_counts_as_none_and_only_the_other_replicas_as_in_sync():
    from kafkabench.admin import PartitionInfo
    from kafkabench.partition_watch import _states

    # broker 2 killed: the metadata still names it leader of 0 and in both ISRs until the controller fences it
    partitions = [PartitionInfo(0, 2, (2, 1, 3), (2, 1, 3)), PartitionInfo(1, 1, (1, 2, 3), (1, 2)),
                  PartitionInfo(2, -1, (3, 1, 2), ())]
    assert _states(partitions, down={2}) == {0: (None, isr(1, 3)), 1: (1, isr(1)), 2: (None, isr())}
    assert _states(partitions, down=set()) == {0: (2, isr(1, 2, 3)), 1: (1, isr(1, 2)), 2: (None, isr())}


def test_reassign_reads_its_brokers_partition_and_throttle_and_refuses_what_cannot_be_moved():
    spec = OperationSpec.parse("reassign,from=1,to=4,partition=2,throttle=1000000")
    assert (spec.number("from"), spec.number("to"), spec.number("partition"), spec.number("throttle")) == (1, 4, 2, 10**6)
    for text, said in (("reassign", "needs the broker to move from"), ("reassign,from=1,to=1", "the same broker"),
                       ("reassign,from=1,throttle=0", "throttle is bytes per second, a whole number > 0, not '0'"),
                       ("reassign,from=x", "from is a broker id, not 'x'"), ("reassign,from=1,kill", "not 'kill'")):
        with pytest.raises(OperationSyntaxError, match=said):
            OperationSpec.parse(text)


def test_a_reassignment_puts_the_new_broker_in_the_old_ones_place_on_the_least_loaded_broker_unless_told():
    from kafkabench.operations.reassign import plan

    replicas = {0: (1, 2), 1: (2, 3), 2: (3, 1), 3: (1, 3)}  # brokers 1 and 3 hold 3 replicas each, 2 holds 2
    # broker 4 (none) takes 0 and 2, then holds as many as 2, and the lower id takes 3; 1's place in each list kept
    assert plan(OperationSpec.parse("reassign,from=1"), replicas, [1, 2, 3, 4]) == {0: [4, 2], 2: [3, 4], 3: [2, 3]}
    assert plan(OperationSpec.parse("reassign,from=3,partition=1,to=1"), replicas, [1, 2, 3]) == {1: [2, 1]}
    # broker 2 holds a replica of 0 already: 0 stays, 2 and 3 move
    assert plan(OperationSpec.parse("reassign,from=1,to=2"), replicas, [1, 2, 3]) == {2: [3, 2], 3: [2, 3]}
    for text, brokers, said in (
            ("reassign,from=1,to=9", [1, 2, 3], "the cluster has no broker 9 \\(brokers 1, 2, 3\\)"),
            ("reassign,from=1,partition=7", [1, 2, 3], "the topic has no partition 7"),
            ("reassign,from=2,partition=3", [1, 2, 3], "broker 2 holds no replica of partition 3: nothing to move"),
            ("reassign,from=3,to=1,partition=3", [1, 2, 3], "broker 1 already holds a replica of every partition "
                                                              "broker 3 holds: nothing can move to it"),
            ("reassign,from=1", [1, 2], "partition 0 has a replica on every broker \\(2 brokers, RF 2\\)")):
        with pytest.raises(ConfigError, match=said):
            plan(OperationSpec.parse(text), replicas, brokers)


def test_a_node_restarted_on_another_release_keeps_its_options_and_config_and_drops_the_other_releases_parts():
    from kafkabench.cluster.embedded import on_release

    command = ["ip", "netns", "exec", "kb-1", "/usr/bin/java", "-Xmx1g", "-XX:SharedArchiveFile=/c/4.1.2/kafka.jsa",
               "-javaagent:/c/4.1.2/jmx.jar=10.0.0.2:9404:/d/rules.yaml", "-Dkafka.logs.dir=/d/node-1", "-cp",
               "/c/4.1.2/a.jar:/c/4.1.2/node.jar", "kafkabench.cluster.KafkabenchNode", "--cluster-id", "x",
               "--ignore-formatted", "--", "/d/node-1/server.properties"]
    assert on_release(command, "/c/4.4.0/a.jar", "/c/4.4.0/jmx.jar") == [
        "ip", "netns", "exec", "kb-1", "/usr/bin/java", "-Xmx1g",
        "-javaagent:/c/4.4.0/jmx.jar=10.0.0.2:9404:/d/rules.yaml", "-Dkafka.logs.dir=/d/node-1", "-cp", "/c/4.4.0/a.jar", "kafka.Kafka", "/d/node-1/server.properties"]


class Releases(Recorded):
    """A cluster of brokers 1-3 beside controller 4, each on a release, restarted onto others."""

    def __init__(self, versions: dict[int, str]):
        super().__init__(brokers=[1, 2, 3])
        self.versions = versions

    def node_ids(self):
        return list(self.versions)

    def controllers(self):
        return [4]

    def node_version(self, node):
        return self.versions[node]

    def restart_on(self, node, version):
        self.done.append(("restart_on", node, version))
        self.versions[node] = version


def test_an_upgrade_goes_to_a_newer_pinned_release_only():
    from kafkabench.operations.upgrade import check as check_upgrade

    old = {1: "4.1.2", 2: "4.1.2", 3: "4.1.2", 4: "4.1.2"}
    check_upgrade(OperationSpec.parse("rolling-upgrade:4.4.0"), Releases(old))
    for text, versions, said in (
            ("rolling-upgrade:4.1.0", old, "Kafka 4.1.0: kafkabench pins no such version"),
            ("rolling-upgrade:4.1.2", {**old, 3: "4.4.0"}, "the cluster runs Kafka 4.4.0, and its metadata.version is "
                                                           "that release's: Kafka does not go back below it; .* "
                                                           "rolling-upgrade:4.4.0,back"),
            ("rolling-upgrade:4.1.2,back", {**old, 3: "4.4.0"}, "Kafka does not go back below it"),
            ("rolling-upgrade:4.4.0", {n: "4.4.0" for n in old}, "runs Kafka 4.4.0 already: nothing to upgrade")):
        with pytest.raises(ConfigError, match=said):
            check_upgrade(OperationSpec.parse(text), Releases(versions))


def test_an_upgrade_restarts_the_controllers_first_then_each_broker_and_finalizes(monkeypatch):
    from kafkabench.operations import upgrade

    finalized = []
    monkeypatch.setattr(upgrade, "finalize",
                        lambda connection, release, timeout_s: finalized.append(release) or (21, 33))
    cluster, clock = Releases({1: "4.1.2", 2: "4.4.0", 3: "4.1.2", 4: "4.1.2"}), iter(range(100))
    done = perform(OperationSpec.parse("rolling-upgrade:4.4.0"), cluster, "unused:9092", "t", lambda: next(clock), 60)
    # broker 2 runs 4.4.0 already (an upgrade the run before ended in): it is left alone
    assert [step for step in cluster.done if step[0] == "restart_on"] == [
        ("restart_on", 4, "4.4.0"), ("restart_on", 1, "4.4.0"), ("restart_on", 3, "4.4.0")]
    assert [(step.get("node"), step.get("role"), step.get("from")) for step in done.steps] == [
        (4, "controller", "4.1.2"), (1, "broker", "4.1.2"), (3, "broker", "4.1.2"), (None, None, None)]
    assert finalized == ["4.4"] and done.steps[-1]["metadata_version"] == 33
    assert done.what.endswith("then finalized: metadata.version 21 -> 33")


def test_an_upgrade_and_back_is_not_finalized_and_rolls_the_brokers_back_first(monkeypatch):
    from kafkabench.operations import upgrade

    monkeypatch.setattr(upgrade, "finalize", lambda *args: pytest.fail("the way back is open only unfinalized"))
    cluster, clock = Releases({1: "4.3.1", 2: "4.3.1", 3: "4.3.1", 4: "4.3.1"}), iter(range(100))
    done = perform(OperationSpec.parse("rolling-upgrade:4.4.0,back"), cluster, "unused:9092", "t", lambda: next(clock), 60)
    assert [(step["node"], step["from"], step["to"]) for step in done.steps] == [
        (4, "4.3.1", "4.4.0"), (1, "4.3.1", "4.4.0"), (2, "4.3.1", "4.4.0"), (3, "4.3.1", "4.4.0"),
        (1, "4.4.0", "4.3.1"), (2, "4.4.0", "4.3.1"), (3, "4.4.0", "4.3.1"), (4, "4.4.0", "4.3.1")]
    assert cluster.versions == {1: "4.3.1", 2: "4.3.1", 3: "4.3.1", 4: "4.3.1"}
    assert "not finalized; then back: node(s) 1, 2, 3, 4 on their release again, brokers first" in done.what


def test_a_new_broker_takes_its_share_of_the_replicas_each_from_the_most_loaded_broker_of_its_partition():
    from kafkabench.operations.reassign import onto

    # 6 partitions x RF 3 on brokers 1-3 (18 replicas); broker 4 joins: its share is 18 // 4 = 4
    replicas = {p: ((1, 2, 3), (2, 3, 1), (3, 1, 2))[p % 3] for p in range(6)}
    moves = onto(replicas, [1, 2, 3, 4], 4)
    assert len(moves) == 4 and all(moves[p].count(4) == 1 and len(moves[p]) == 3 for p in moves)
    taken = [next(b for b in replicas[p] if b not in moves[p]) for p in sorted(moves)]
    assert sorted(taken.count(broker) for broker in (1, 2, 3)) == [1, 1, 2]  # no broker drained below its share
    assert all(moves[p][replicas[p].index(taken[i])] == 4 for i, p in enumerate(sorted(moves)))  # in its place
    assert onto({0: (1,)}, [1, 2], 2) == {}  # 1 replica on 2 brokers: a share of 0

import pytest

from kafkabench.faults.spec import EXAMPLES, FaultSpec, FaultSyntaxError


@pytest.mark.parametrize("text", EXAMPLES)
def test_every_example_the_errors_show_parses(text):
    FaultSpec.parse(text)


def test_a_network_fault_reads_its_target_duration_and_options():
    spec = FaultSpec.parse("partition-leader:40,from=followers+controllers,oneway=in,reset")
    assert (spec.action, spec.role, spec.down_s, spec.is_network) == ("partition", "leader", 40.0, True)
    assert spec.peer_groups == ["followers", "controllers"] and spec.option("oneway") == "in"
    assert spec.option("reset") == ""
    delay = FaultSpec.parse("delay-2:30,ms=50,jitter=10,to=clients")
    assert (delay.number("ms"), delay.number("jitter"), delay.option("to"), delay.node_ids) == (50, 10, "clients", [2])
    assert FaultSpec.parse("partition-3").peer_groups == ["all"] and FaultSpec.parse("partition-3").down_s == 3.0
    assert FaultSpec.parse("delay-leader,ms=5,to=101").node_ids == [101]


def test_process_faults_keep_their_old_forms():
    assert FaultSpec.parse("pause-leader:1.5") == FaultSpec("pause-leader", 1.5)
    assert FaultSpec.parse("restart-leader").down_s is None and not FaultSpec.parse("kill-follower").is_network


@pytest.mark.parametrize("text, message", [
    ("kill-broker", "the target is leader, follower, controller, coordinator, consumer or a node id, not 'broker'"),
    ("shake-leader", "no fault 'shake'"),
    ("restart-leader:3", "a clean restart takes no duration"),
    ("kill-leader:0", "the duration must be > 0 s"),
    ("kill-leader,ms=5", "kill-leader takes of, not 'ms'"),
    ("loss-leader:3", "loss needs percent=..., e.g. loss-leader:20,percent=5"),
    ("loss-leader,percent=120", "loss of 120 % is out of range"),
    ("loss-leader,percent=five", "percent must be a number, not 'five'"),
    ("delay-leader,ms=0", "the delay must be above 0"),
    ("delay-leader,ms=50,jitter=60", "the jitter from 0 to it"),
    ("delay-leader,ms=50,to=moon", "to=moon: leader, follower, controller, clients or a node id"),
    ("bandwidth-leader,mbit=0", "bandwidth of 0 Mbit/s is out of range"),
    ("partition-leader,from=friends", "from=friends: cut from followers, controllers, brokers, clients, all"),
    ("partition-leader,oneway=up", "oneway=up: in (packets to the target cut) or out (from it)"),
    ("partition-leader,reset=yes", "reset takes no value"),
    ("partition-leader,delay=5", "partition-leader takes from, oneway, reset, of, not 'delay'"),
    ("partition leader", "expected ACTION-TARGET[:SECONDS][,OPTION=VALUE...]"),
])
def test_bad_faults_say_what_is_wrong_in_one_line(text, message):
    with pytest.raises(FaultSyntaxError) as refused:
        FaultSpec.parse(text)
    assert message in str(refused.value) and "\n" not in str(refused.value)

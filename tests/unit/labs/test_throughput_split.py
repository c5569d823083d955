import pytest
from hypothesis import given
from hypothesis import strategies as st

from kafkabench.errors import ConfigError
from kafkabench.labs.throughput.run import deal, node_partitions, split_count


@given(st.dictionaries(st.integers(0, 50), st.integers(0, 10**6), min_size=1, max_size=12), st.data())
def test_a_count_is_split_exactly_and_no_partition_gives_more_than_it_holds(available, data):
    total = sum(available.values())
    count = data.draw(st.integers(0, total + 5))
    shares = split_count(count, available)
    if total == 0 or count > total:
        assert shares is None
        return
    assert sum(shares.values()) == count
    assert all(0 <= shares[p] <= available[p] for p in available)


def test_shares_follow_what_each_partition_holds():
    assert split_count(10_001, {0: 20_000, 1: 10_000, 2: 0}) == {0: 6_667, 1: 3_334, 2: 0}


def test_partitions_are_dealt_to_producer_consumer_pairs_in_turn_none_shared():
    assert deal(7, 3) == [[0, 3, 6], [1, 4], [2, 5]]
    assert deal(3, 3) == [[0], [1], [2]]


def test_on_a_launcher_of_several_hosts_a_run_without_a_consumer_per_producer_is_refused_naming_the_ways_out():
    import dataclasses

    from kafkabench.cluster.target import Target
    from kafkabench.core.events import SILENT
    from kafkabench.labs.throughput.plan import plan_throughput
    from kafkabench.labs.throughput.scenario import ProduceScenario

    class SeveralHosts:
        name, pairs_by_node = "ray", True

    plan = plan_throughput(ProduceScenario(size=100, count=10, producers=3, consumers=1, partitions=3), SILENT)
    target = dataclasses.replace(Target.external("127.0.0.1:1"), launcher=SeveralHosts())
    with pytest.raises(ConfigError, match=r"give as many consumers as producers \(--consumers 3\), or read across "
                                          r"nodes' clocks with --cross-host-e2e"):
        node_partitions(plan, target, "t")
    assert node_partitions(plan, Target.external("127.0.0.1:1"), "t") is None  # one host: the group decides


def test_per_node_figures_merge_each_nodes_workers_bucket_for_bucket_and_a_single_node_adds_none():
    from types import SimpleNamespace

    from kafkabench.core.fleet import FleetWorker
    from kafkabench.core.histogram import LatencyHistogram
    from kafkabench.core.protocol import Outcome
    from kafkabench.labs.throughput.run import per_node

    def consumer(node: str, latencies_ms: list[int]) -> FleetWorker:
        histogram = LatencyHistogram()
        for ms in latencies_ms:
            histogram.record_ns(ms * 1_000_000)
        worker = FleetWorker("consume", SimpleNamespace(name=f"consumer on {node}", placement={"node": node}))
        worker.outcome = Outcome(histograms={"e2e": histogram.encode()}, counters={"received": len(latencies_ms)},
                                 start_ns=0, end_ns=2_000_000_000)
        return worker

    workers = [consumer("a" * 56, [1, 2, 3]), consumer("a" * 56, [100]), consumer("b" * 56, [5])]
    nodes = per_node("consume", workers)
    assert nodes["a" * 56]["workers"] == 2 and nodes["a" * 56]["records"] == 4
    assert nodes["a" * 56]["stats"]["e2e"]["max_ms"] == pytest.approx(100, rel=1e-3)  # merged, not averaged
    assert nodes["a" * 56]["throughput"]["records_per_s"] == 2.0
    assert nodes["b" * 56]["stats"]["e2e"]["count"] == 1
    assert per_node("consume", workers[:2]) == {}  # one node: the totals say it all

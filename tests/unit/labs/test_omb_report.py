"""The OMB lab's lines: e2e both ways on the same records, and the cluster's times at a workload's count."""

from kafkabench.core.results import ResultDocument
from kafkabench.labs.omb.report import cluster_times_text, lines


def test_each_workload_says_its_e2e_both_ways_and_its_cluster_times():
    times = {"topics": 1000, "partitions": 1000, "create_s": 3.42, "metadata_change_s": 0.081,
             "controller_failover": {"killed": 3001, "how": "another controller took over", "metadata_change_s": 1.93},
             "broker_restart": {"broker": 1, "in_sync_s": 12.47}}
    compared = {"kafkabench": {"p50_ms": 1.68, "p99_ms": 4.2, "max_ms": 9.0, "count": 1000},
                "omb_definition": {"p50_ms": 2.0, "p99_ms": 5.0, "max_ms": 9.0, "count": 990}, "dropped": 10}
    document = ResultDocument(lab="omb", created_at="2026-11-29T00:00:00+00:00", params={
        "omb_results": [], "workloads": [{"file": "w/1000-topics.yaml", "e2e_compared": compared,
                                          "cluster_times": times}, {"file": "w/no-consumers.yaml"}]})
    said = lines(document)
    assert "1000-topics: e2e p50/p99 1.68/4.20 ms here, 2.00/5.00 ms by OMB's definition on the same records " \
           "(10 at or below 0 ms dropped)" in said
    assert f"1000-topics: {cluster_times_text(times)}" in said and not any("no-consumers" in line for line in said)
    assert cluster_times_text(times) == (
        "1,000 topics (1,000 partitions) created and in sync in 3.4 s; a metadata change 0.08 s; controller 3001 "
        "killed: another controller took over, a metadata change 1.9 s after; broker 1 restarted, in sync 12.5 s after")
    one = {**times, "topics": 1, "partitions": 1}
    assert cluster_times_text(one).startswith("1 topic (1 partition) created and in sync in 3.4 s")

"""The OMB lab's --cluster-times on a cluster it may break: a workload's topics created, the KRaft controller killed
and a broker restarted at that count, each timed, and the cluster whole again after it."""

import pytest

from kafkabench.admin import KafkaAdmin
from kafkabench.cluster.faults import EmbeddedFaults, FaultsUnavailable
from kafkabench.cluster.target import Target
from kafkabench.core.events import SILENT
from kafkabench.labs.omb.run import run_omb
from kafkabench.labs.omb.scenario import OmbScenario
from tests.integration.test_omb_lab import files, shape

pytestmark = pytest.mark.integration


def test_a_workloads_topics_are_created_its_controller_killed_and_a_broker_restarted_each_timed(cluster, tmp_path):
    [workload, driver] = files(tmp_path, {"20-topics-3-partitions": shape(topics=20, partitionsPerTopic=3,
                                                                         producerRate=500)})
    scenario = OmbScenario(workloads=[workload], driver=driver, client="confluent", duration=2, warmup=0, interval=1,
                           cluster_times=True)
    with pytest.raises(FaultsUnavailable):  # a cluster kafkabench does not own: refused before anything runs
        run_omb(scenario, Target.external(cluster.bootstrap_servers), tmp_path / "external", SILENT)
    assert not (tmp_path / "external").exists()
    document = run_omb(scenario, Target.embedded(cluster), tmp_path / "out", SILENT)
    times = document.params["workloads"][0]["cluster_times"]
    assert (times["topics"], times["partitions"]) == (20, 60) and times["create_s"] > 0
    # one dedicated controller: killed, it is the one that must come back before the cluster changes anything
    failover, restart = times["controller_failover"], times["broker_restart"]
    assert failover["killed"] in cluster.controller_ids() and failover["how"] == "the only controller restarted"
    assert failover["metadata_change_s"] > times["metadata_change_s"] > 0
    assert restart["broker"] in cluster.broker_ids() and restart["in_sync_s"] > 0
    assert all(node.state == "running" for node in [*cluster.status().brokers, *cluster.status().controllers])
    EmbeddedFaults(cluster).wait_healthy(60)
    with KafkaAdmin(cluster.bootstrap_servers) as admin:
        assert not [name for name in admin.topic_names() if "omb-times" in name or "metadata-probe" in name]

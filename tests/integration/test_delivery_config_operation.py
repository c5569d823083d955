"""An operation that needs only the Admin API, on the session's broker while a producer sends: a topic setting
changed live and read back, a preferred leader election with nothing to elect, nothing lost."""

import pytest

from kafkabench.cluster import EmbeddedCluster
from kafkabench.cluster.target import Target
from kafkabench.core.events import SILENT
from kafkabench.labs.delivery.report import lines, verdict_of
from kafkabench.labs.delivery.run import run_delivery
from kafkabench.labs.delivery.scenario import DeliveryScenario

pytestmark = [pytest.mark.integration, pytest.mark.quick]  # seconds on the session cluster: in `make test-quick`


def test_a_topic_setting_changed_live_is_read_back_and_an_election_with_nothing_to_elect_says_so(kafka_cluster,
                                                                                                 tmp_path):
    target = Target.embedded(kafka_cluster) if isinstance(kafka_cluster, EmbeddedCluster) else \
        Target.external(kafka_cluster.bootstrap_servers)
    document = run_delivery(DeliveryScenario(
        clients=["confluent"], modes=["async-close"], replication_factors=[1], partitions=2, count=6_000, rate=2_000,
        operations=["config,topic=retention.ms=3600000,topic=max.message.bytes=2000000", "elect-leaders"], bounces=2,
        fault_after=500, bounce_every=0.5, faults_must_fire=True), target, tmp_path, SILENT)
    [run] = document.runs
    assert run.error is None and run.params["fault_coverage"] == "2 of 2 planned operations fired", run.params["faults"]
    config, election = run.params["faults"]
    [step] = config["steps"]
    assert step["topic_read_back"] == {"retention.ms": "3600000", "max.message.bytes": "2000000"}, step
    assert config["what"].endswith("'s retention.ms=3600000, max.message.bytes=2000000")
    assert config["fired_s"] <= step["set_s"] <= step["done_s"] <= config["healed_s"] < election["fired_s"]
    assert election["steps"][0]["skewed"] == [] and "nothing to elect" in election["what"]
    verdict = verdict_of(run)
    assert (verdict.sent, verdict.acknowledged, verdict.lost) == (6_000, 6_000, 0)
    said = "\n".join(lines(document))
    assert "set live: kafkabench-delivery-" in said and "; 2 of 2 planned operations fired" in said

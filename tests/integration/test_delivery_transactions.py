"""Transactional producers in the delivery lab on a real broker, confluent and java: transactions aborted on purpose
are never read by read_committed and are read by read_uncommitted (so the checker could see an aborted read), and
every committed transaction is read whole."""

import pytest

from kafkabench.cluster.target import Target
from kafkabench.cluster import EmbeddedCluster
from kafkabench.core.delivery_history import History
from kafkabench.core.events import SILENT
from kafkabench.labs.delivery.report import lines, verdict_of
from kafkabench.labs.delivery.run import run_delivery
from kafkabench.labs.delivery.scenario import DeliveryScenario
from kafkabench.workers.delivery import aborted

pytestmark = [pytest.mark.integration, pytest.mark.quick]  # seconds on the session cluster: in `make test-quick`

COUNT, SIZE, RATIO = 1_200, 40, 0.25  # 30 transactions, 7 of them aborted on purpose


def test_aborted_transactions_are_seen_only_by_read_uncommitted_and_committed_ones_whole(kafka_cluster, tmp_path):
    if not isinstance(kafka_cluster, EmbeddedCluster):
        pytest.skip("a transactional producer needs the cluster's transaction state log: kafkabench's own cluster")
    document = run_delivery(DeliveryScenario(clients=["confluent", "java"], modes=["async-close"], count=COUNT,
                                             replication_factors=[1], partitions=3, transactions=SIZE,
                                             abort_ratio=RATIO), Target.embedded(kafka_cluster), tmp_path, SILENT)
    on_purpose = sum(aborted(t, RATIO) for t in range(COUNT // SIZE))
    assert on_purpose == 7
    for run in document.runs:
        assert run.error is None, (run.client, run.error)
        c = run.counters
        assert (c["committed_transactions"], c["aborted_transactions"]) == (COUNT // SIZE - on_purpose, on_purpose)
        assert (c["aborted_reads"], c["torn_transactions"]) == (0, 0), run.client
        assert c["aborted_seen_uncommitted"] == on_purpose * SIZE, run.client  # written, marked aborted
        verdict = verdict_of(run)
        assert (verdict.acknowledged, verdict.lost, verdict.duplicated, verdict.distinct_read) == (
            COUNT - on_purpose * SIZE, 0, 0, COUNT - on_purpose * SIZE), run.client
        assert run.params["failures"] == [] and run.params["transactions"]["transactional_ids"]
        assert History.load(tmp_path / run.params["history"]).aborted == on_purpose * SIZE
    said = "\n".join(lines(document))
    assert "23 transactions committed, 7 aborted; read_committed saw 0 messages of aborted transactions" in said
    assert document.cluster["transaction_version"] == 2  # Kafka 4.x finalizes KIP-890's transactions V2
    assert "the cluster's transaction.version: 2 (KIP-890's transactions V2" in said

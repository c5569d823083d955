"""The delivery worker's producer modes on a real broker, judged by the exact checker: what the process was
told is in its mapped history even when it exits at once, and the unacknowledged tail of an async exit is
unknown, never lost."""

import pytest

from kafkabench.core.launcher import LOCAL_WORKERS
from kafkabench.core.protocol import DeliveryParams, Progress, Ready, Result, Start, Task, task_params
from kafkabench.core.delivery_history import History
from kafkabench.core.histogram import LatencyHistogram

from tests.integration.delivery_workers import told_to_finish, verdict

pytestmark = [pytest.mark.integration, pytest.mark.quick]  # seconds on the session cluster: in `make test-quick`

COUNT = 20_000


def deliver(bootstrap: str, topic: str, history_dir, mode: str, producer_config: dict, count: int = COUNT,
            sleep_ms: int = 0, client: str = "confluent") -> tuple[Result, int | None]:
    task = Task(scenario="delivery", client=client, bootstrap_servers=bootstrap, topic=topic,
                producer_config=producer_config, timeout_s=30,
                params=task_params(DeliveryParams(mode=mode, count=count, producer=3, size=100,
                                                  history_dir=str(history_dir), sleep_ms=sleep_ms)))
    worker = LOCAL_WORKERS.start(f"delivery {mode}", client)
    try:
        worker.send(task)
        worker.receive(Ready, timeout_s=60)
        worker.send(Start())
        progress = []
        while not isinstance(message := worker.next_message(120), Result):
            assert isinstance(message, Progress), message
            progress.append(message)
        assert progress and progress[-1].done == count and progress[-1].acked <= message.counters["acked"]
        # every acknowledgement in one progress window, with its publish latency as the client reported it
        windows = [one.window for one in progress]
        assert sum(window.records for window in windows) == progress[-1].acked, windows
        assert sum(LatencyHistogram.decode(window.histograms["publish"]).count for window in windows
                   if window.histograms) == progress[-1].acked
        return message, worker.wait_exit(30)
    finally:
        worker.stop()


def test_sync_with_acks_all_delivers_every_message_and_times_the_seeds_stopwatch(kafka_cluster, admin, topic_name, tmp_path):
    bootstrap = kafka_cluster.bootstrap_servers
    admin.create_topic(topic_name, partitions=3)
    result, code = deliver(bootstrap, topic_name, tmp_path / "sync", "sync", {"acks": "all"}, count=500)
    assert code == 0
    assert result.counters == {"sent": 500, "acked": 500, "failed": 0, "unknown": 0}
    assert [name for name in result.timings if name.startswith("single_")] == [f"single_{i}_ms" for i in range(1, 9)]
    assert result.timings["bulk_ms"] > 0 and result.timings["ms_per_event"] > 0
    found = verdict(bootstrap, topic_name, History.open_mapped(tmp_path / "sync"))
    assert (found.acknowledged, found.lost, found.unknown, found.duplicated, found.reordered) == (500, 0, 0, 0, 0)
    assert found.delivered_pct == 100.0


def test_an_async_exit_leaves_its_unanswered_tail_unknown_never_lost(kafka_cluster, admin, topic_name, tmp_path):
    bootstrap = kafka_cluster.bootstrap_servers
    admin.create_topic(topic_name, partitions=3)
    # records wait up to 5 s in the client's batches: the exit comes while most are still there, and the last batch
    # has not left even when a loaded machine takes seconds over the sends (with 1 s it could have)
    result, code = deliver(bootstrap, topic_name, tmp_path / "exit", "async-exit", {"acks": "1", "linger.ms": 5000})
    assert code == 0
    history = History.open_mapped(tmp_path / "exit")
    assert history.unknown > 0 and history.acked + history.unknown == COUNT
    assert result.counters["unknown"] >= history.unknown  # told before the result left; nothing after
    found = verdict(bootstrap, topic_name, history)
    assert found.lost == 0 and found.unknown == history.unknown
    assert found.unknown_found + found.unknown_not_found == history.unknown and found.unknown_not_found > 0
    assert found.delivered_pct < 100.0


def test_async_sleep_hears_the_answers_that_come_while_it_sleeps(kafka_cluster, admin, topic_name, tmp_path):
    bootstrap = kafka_cluster.bootstrap_servers
    admin.create_topic(topic_name, partitions=3)
    result, code = deliver(bootstrap, topic_name, tmp_path / "sleep", "async-sleep", {"acks": "1"}, sleep_ms=3000)
    assert code == 0 and result.timings["ending_ms"] >= 3000
    found = verdict(bootstrap, topic_name, History.open_mapped(tmp_path / "sleep"))
    assert (found.acknowledged, found.lost, found.delivered_pct) == (COUNT, 0, 100.0)


@pytest.mark.parametrize("client", ["kafka-python", "aiokafka"])
@pytest.mark.parametrize("mode, count", [("sync", 50), ("async-close", 3000)])
def test_the_pure_python_clients_record_every_answer_through_their_tracked_sends(client, mode, count, kafka_cluster,
                                                                                admin, topic_name, tmp_path):
    bootstrap = kafka_cluster.bootstrap_servers
    admin.create_topic(topic_name, partitions=3)
    result, code = deliver(bootstrap, topic_name, tmp_path, mode, {"acks": "all"}, count=count, client=client)
    assert code == 0 and result.counters == {"sent": count, "acked": count, "failed": 0, "unknown": 0}
    history = History.open_mapped(tmp_path)
    assert (history.partition >= 0).all() and (history.offset >= 0).all()
    found = verdict(bootstrap, topic_name, history)
    assert (found.acknowledged, found.lost, found.duplicated, found.offset_mismatch) == (count, 0, 0, 0)


@pytest.mark.parametrize("mode", ["sync", "async-close"])
def test_a_finish_while_sending_ends_it_there_and_the_history_counts_what_was_sent(mode, kafka_cluster, admin,
                                                                                   topic_name, tmp_path):
    bootstrap = kafka_cluster.bootstrap_servers
    admin.create_topic(topic_name, partitions=2)
    count = 100_000  # 100 s at 1,000/s: told to finish after 1,000 acknowledgements
    task = Task(scenario="delivery", client="confluent", bootstrap_servers=bootstrap, topic=topic_name,
                producer_config={"acks": "all"}, timeout_s=30,
                params=task_params(DeliveryParams(mode=mode, count=count, producer=3, size=100, rate_per_s=1000,
                                                  history_dir=str(tmp_path / "h"))))
    message = told_to_finish(task, ready_timeout_s=60)
    sent = message.counters["sent"]
    assert 1000 <= sent < 10_000 and message.counters == {"sent": sent, "acked": sent, "failed": 0, "unknown": 0}
    history = History.open_mapped(tmp_path / "h")
    assert history.sent == sent and history.acked == sent
    result = verdict(bootstrap, topic_name, history)
    assert (result.sent, result.acknowledged, result.lost, result.strays) == (sent, sent, 0, 0)

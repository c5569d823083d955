"""The Java worker's delivery scenario on a real broker, judged as the Python worker's is: its mapped history
is the file format Python's History reads, what the process was told is in it even when it halts at once,
and the unacknowledged tail of an async exit is unknown, never lost."""

import pytest

from kafkabench.clients import availability
from kafkabench.core.launcher import LOCAL_WORKERS
from kafkabench.core.protocol import DeliveryParams, Progress, Ready, Result, Start, Task, task_params
from kafkabench.core.worker_process import WorkerFailed
from kafkabench.core.delivery_history import History
from kafkabench.core.histogram import LatencyHistogram

from tests.integration.delivery_workers import told_to_finish, verdict

pytestmark = [pytest.mark.integration,
              pytest.mark.skipif(not availability("java").available, reason="the Java worker needs a JDK (javac)")]

COUNT = 20_000
READY_TIMEOUT_S = 120  # the first use compiles the worker (and may fetch the Kafka jars)


def delivery_task(bootstrap: str, topic: str, history_dir, mode: str, producer_config: dict, count: int,
                  sleep_ms: int = 0) -> Task:
    return Task(scenario="delivery", client="java", bootstrap_servers=bootstrap, topic=topic,
                producer_config=producer_config, timeout_s=30,
                params=task_params(DeliveryParams(mode=mode, count=count, producer=3, size=100,
                                                  history_dir=str(history_dir), sleep_ms=sleep_ms)))


def run_until_result(worker, task: Task) -> tuple[Result, list[Progress]]:
    worker.send(task)
    worker.receive(Ready, timeout_s=READY_TIMEOUT_S)
    worker.send(Start())
    progress = []
    while not isinstance(message := worker.next_message(120), Result):
        assert isinstance(message, Progress), message
        progress.append(message)
    count = task.params["count"]
    assert progress and progress[-1].done == count and progress[-1].acked <= message.counters["acked"]
    return message, progress


def deliver(bootstrap: str, topic: str, history_dir, mode: str, producer_config: dict, count: int = COUNT,
            sleep_ms: int = 0) -> tuple[Result, list[Progress], int | None]:
    worker = LOCAL_WORKERS.start(f"java delivery {mode}", "java")
    try:
        result, progress = run_until_result(worker, delivery_task(bootstrap, topic, history_dir, mode, producer_config,
                                                                  count, sleep_ms))
        return result, progress, worker.wait_exit(30)
    finally:
        worker.stop()


def test_sync_with_acks_all_delivers_every_message_and_times_the_seeds_stopwatch(kafka_cluster, admin, topic_name,
                                                                                tmp_path):
    bootstrap = kafka_cluster.bootstrap_servers
    admin.create_topic(topic_name, partitions=3)
    result, _, code = deliver(bootstrap, topic_name, tmp_path / "sync", "sync", {"acks": "all"}, count=500)
    assert code == 0
    assert result.counters == {"sent": 500, "acked": 500, "failed": 0, "unknown": 0}
    assert list(result.timings) == [*(f"single_{i}_ms" for i in range(1, 9)), "bulk_ms", "ending_ms", "ms_per_event"]
    assert result.timings["bulk_ms"] > 0 and result.timings["ms_per_event"] > 0
    assert result.effective_config["producer"]["acks"] == "-1"
    history = History.open_mapped(tmp_path / "sync")
    assert (history.producer, history.sent, history.error_names) == (3, 500, [""])
    found = verdict(bootstrap, topic_name, history)
    assert (found.acknowledged, found.lost, found.unknown, found.duplicated, found.reordered) == (500, 0, 0, 0, 0)
    assert found.delivered_pct == 100.0


def test_an_async_exit_halts_at_once_and_leaves_its_unanswered_tail_unknown_never_lost(kafka_cluster, admin, topic_name,
                                                                                     tmp_path):
    bootstrap = kafka_cluster.bootstrap_servers
    admin.create_topic(topic_name, partitions=3)
    # Records wait up to 5 s in the client's batches, and the halt comes while they are still there, even when a
    # loaded machine takes seconds over the sends (with 1 s the batches could leave first). The
    # Java client sends all of a broker's batches, full or not, as soon as one is full, so with a default
    # batch.size the tail sometimes left with the last full batch (every message acknowledged, 1 run in 3 on
    # one broker): a batch larger than the whole run (~2.2 MB) keeps every record waiting for the linger.
    result, _, code = deliver(bootstrap, topic_name, tmp_path / "exit", "async-exit",
                              {"acks": "1", "linger.ms": 5000, "batch.size": 4 * 1024 * 1024})
    assert code == 0
    history = History.open_mapped(tmp_path / "exit")
    assert history.unknown > 0 and history.acked + history.unknown == COUNT
    assert result.counters["unknown"] >= history.unknown  # told before the result left; nothing after
    found = verdict(bootstrap, topic_name, history)
    assert found.lost == 0 and found.unknown == history.unknown
    assert found.unknown_found + found.unknown_not_found == history.unknown and found.unknown_not_found > 0


def test_async_sleep_hears_the_answers_that_come_while_it_sleeps(kafka_cluster, admin, topic_name, tmp_path):
    bootstrap = kafka_cluster.bootstrap_servers
    admin.create_topic(topic_name, partitions=3)
    result, _, code = deliver(bootstrap, topic_name, tmp_path / "sleep", "async-sleep", {"acks": "1"}, sleep_ms=3000)
    assert code == 0 and result.timings["ending_ms"] >= 3000
    assert result.counters == {"sent": COUNT, "acked": COUNT, "failed": 0, "unknown": 0}
    found = verdict(bootstrap, topic_name, History.open_mapped(tmp_path / "sleep"))
    assert (found.acknowledged, found.lost, found.delivered_pct) == (COUNT, 0, 100.0)


def test_async_return_leaves_the_jvm_to_end_by_itself(kafka_cluster, admin, topic_name, tmp_path):
    bootstrap = kafka_cluster.bootstrap_servers
    admin.create_topic(topic_name, partitions=3)
    worker = LOCAL_WORKERS.start("java delivery async-return", "java")
    try:
        result, _ = run_until_result(worker, delivery_task(bootstrap, topic_name, tmp_path / "return", "async-return",
                                                           {"acks": "1"}, COUNT))
        assert result.counters["sent"] == COUNT
        # Observed with kafka-clients 4.1: main returns without closing the producer, and the JVM ends by
        # itself at once with code 0, since the producer's I/O thread is a daemon thread (and so are the
        # worker's stdin reader and helpers): nothing non-daemon is left to keep it alive.
        assert worker.wait_exit(15) == 0
    finally:
        worker.stop()


def test_async_close_reports_acknowledgements_while_it_runs(kafka_cluster, admin, topic_name, tmp_path):
    bootstrap = kafka_cluster.bootstrap_servers
    admin.create_topic(topic_name, partitions=3)
    count = 200_000
    result, progress, code = deliver(bootstrap, topic_name, tmp_path / "close", "async-close", {"acks": "1"},
                                     count=count)
    assert code == 0
    assert result.counters == {"sent": count, "acked": count, "failed": 0, "unknown": 0}
    assert all(message.acked is not None for message in progress)
    # each progress carries its window: the acknowledged since the last one and their publish latencies, every
    # acknowledgement in exactly one window
    windows = [message.window for message in progress]
    assert [window.index for window in windows] == list(range(len(windows)))
    assert sum(window.records for window in windows) == count
    latencies = [LatencyHistogram.decode(window.histograms["publish"]) for window in windows]
    assert sum(histogram.count for histogram in latencies) == count
    assert all(0 < histogram.percentiles_ms(100)[0] < 60_000 for histogram in latencies if histogram.count)
    assert [message.acked for message in progress] == sorted(message.acked for message in progress)
    assert any(0 < message.acked < count for message in progress)  # acknowledgements seen before the end
    assert progress[-1].acked == count  # the forced last one, after the flush


def test_a_failed_send_is_stored_with_its_error_name(kafka_cluster, admin, topic_name, tmp_path):
    bootstrap = kafka_cluster.bootstrap_servers
    admin.create_topic(topic_name, partitions=1)
    worker = LOCAL_WORKERS.start("java delivery too large", "java")
    try:
        task = delivery_task(bootstrap, topic_name, tmp_path / "large", "sync", {"acks": "1"}, count=3)
        task = task.model_copy(update={"params": {**task.params, "size": 2_000_000}})  # > max.request.size
        result, _ = run_until_result(worker, task)
        assert worker.wait_exit(30) == 0
    finally:
        worker.stop()
    assert result.counters == {"sent": 3, "acked": 0, "failed": 3, "unknown": 0}
    history = History.open_mapped(tmp_path / "large")
    assert history.error_counts() == {"RecordTooLargeException": 3}


def test_a_sleep_without_async_sleep_is_a_config_error_naming_the_param(tmp_path):
    worker = LOCAL_WORKERS.start("java delivery bad params", "java")
    try:
        worker.send(Task(scenario="delivery", client="java", bootstrap_servers="localhost:1", topic="t",
                         params={"mode": "async-exit", "count": 10, "history_dir": str(tmp_path), "sleep_ms": 5}))
        with pytest.raises(WorkerFailed, match=r"params\.sleep_ms must be > 0 with mode async-sleep") as failed:
            worker.next_message(READY_TIMEOUT_S)
        assert failed.value.kind == "config"
        assert worker.wait_exit(30) == 1
    finally:
        worker.stop()


def test_a_finish_ends_the_sending_between_two_transactions_and_the_history_counts_what_was_sent(
        kafka_cluster, admin, topic_name, tmp_path):
    bootstrap = kafka_cluster.bootstrap_servers
    admin.create_topic(topic_name, partitions=2)
    count = 100_000  # 100 s at 1,000/s in transactions of 100: told to finish after 1,000 acknowledgements
    task = Task(scenario="delivery", client="java", bootstrap_servers=bootstrap, topic=topic_name, timeout_s=30,
                producer_config={"acks": "all", "enable.idempotence": "true", "transactional.id": f"{topic_name}-t"},
                params=task_params(DeliveryParams(mode="async-close", count=count, producer=3, size=100,
                                                  rate_per_s=1000, transaction_size=100, singles=0,
                                                  history_dir=str(tmp_path / "h"))))
    message = told_to_finish(task, ready_timeout_s=READY_TIMEOUT_S)
    sent = message.counters["sent"]
    assert 1000 <= sent < 10_000 and sent % 100 == 0, sent  # whole transactions only
    assert message.counters == {"sent": sent, "acked": sent, "failed": 0, "unknown": 0, "aborted": 0}
    history = History.open_mapped(tmp_path / "h")
    assert history.sent == sent and history.acked == sent
    result = verdict(bootstrap, topic_name, history)
    assert (result.sent, result.acknowledged, result.lost, result.strays) == (sent, sent, 0, 0)

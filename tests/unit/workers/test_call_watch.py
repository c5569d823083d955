"""The watchdog over a worker's client calls: a call held past a second is named in progress, one held past the bound
ends the process with an error naming it and what was done so far; a delivery producer stuck in a transactional call
says which one."""

from __future__ import annotations

import threading
from types import SimpleNamespace

import numpy as np

from kafkabench.core.protocol import DeliveryParams, Error, Outcome, Progress, Task
from kafkabench.workers import call_watch
from kafkabench.workers.adapters.base import Answers
from kafkabench.workers.call_watch import CallWatch
from kafkabench.workers.delivery import DeliveryRun

from tests.conftest import wait_for


def exits(monkeypatch) -> list[int]:
    """os._exit as the watchdog calls it, recorded instead of ending the test's process."""
    codes: list[int] = []
    monkeypatch.setattr(call_watch, "os", SimpleNamespace(_exit=codes.append))
    return codes


def test_a_call_is_named_once_held_a_second_and_ends_the_process_past_the_bound(monkeypatch):
    codes, said = exits(monkeypatch), []
    monkeypatch.setattr(call_watch, "WATCH_MARGIN_S", 0.0)
    watch = CallWatch("confluent", 1.6, said.append, lambda: Outcome(counters={"processed": 7}))
    assert watch.calling() == {}
    with watch.call("poll"):
        assert watch.calling() == {}  # too short to name
    watch.start()
    released = threading.Event()
    with watch.call("commit"):
        with watch.call("inner"):
            pass
        wait_for(lambda: watch.calling(), 5, "the call to be named")
        assert watch.calling()["calling"] == "commit" and watch.calling()["calling_s"] >= 1.0  # the outer one again
        wait_for(lambda: codes, 5, "the watchdog to give up")
        released.set()
    [error] = [message for message in said if isinstance(message, Error)]
    assert error.message == "confluent's commit did not return within 1.6 s (the task's timeout_s + 0 s)"
    assert error.kind == "timeout" and error.partial.counters == {"processed": 7} and codes == [call_watch.EXIT_CODE]


class Stuck:
    """A transactional client whose first commit never returns (as librdkafka's did, issue #5511's kind)."""

    name = "stuck"

    def __init__(self):
        self.released = threading.Event()

    def open_producer(self, bootstrap_servers, config, answers):
        self.answers = answers

    def init_transactions(self, timeout_s):
        pass

    def begin_transaction(self):
        pass

    def send_tracked(self, topic, values, stamp_ns=None):
        self.answers.extend(values)
        return len(values)

    def read_answers(self, entries):
        return Answers(list(entries), [0] * len(entries), list(range(len(entries))), [None] * len(entries),
                       np.full(len(entries), 10.0))

    def poll(self, timeout_s):
        pass

    def flush(self, timeout_s):
        return 0

    def commit_transaction(self, timeout_s):
        self.released.wait(30)


def test_a_producer_stuck_in_commit_transaction_names_it_in_progress_and_in_its_error(tmp_path, monkeypatch):
    codes, said = exits(monkeypatch), []
    monkeypatch.setattr(call_watch, "WATCH_MARGIN_S", 0.0)
    client = Stuck()
    params = DeliveryParams(mode="async-close", count=10, history_dir=str(tmp_path), size=20, singles=0,
                            transaction_size=5)
    task = Task(scenario="delivery", client="confluent", bootstrap_servers="unused:9092", topic="t", timeout_s=1.5,
                producer_config={"transactional.id": "x"})
    run = DeliveryRun(client, task, params, said.append)
    run.open()
    sending = threading.Thread(target=run.run, daemon=True)
    sending.start()
    try:
        wait_for(lambda: codes, 10, "the watchdog to give up on the commit")
    finally:
        client.released.set()
    named = [m for m in said if isinstance(m, Progress) and m.calling]
    assert named and {m.calling for m in named} == {"commit_transaction"} and named[-1].done == 5
    assert all(m.window is None for m in named)  # the sending thread's own reports carry the windows
    [error] = [m for m in said if isinstance(m, Error)]
    assert error.message.startswith("stuck's commit_transaction did not return within 1.5 s")
    assert error.partial is not None and "sent" in error.partial.counters  # what was done so far
    sending.join(10)


def test_nothing_but_the_error_comes_before_ready_when_the_producer_cannot_open_its_transactions(tmp_path):
    from kafkabench.workers.adapters.base import AdapterError
    from kafkabench.workers.throughput_run import RunFailed

    class Refused(Stuck):
        def init_transactions(self, timeout_s):
            raise AdapterError("the transactional.id is not authorized")

    said = []
    params = DeliveryParams(mode="async-close", count=10, history_dir=str(tmp_path), size=20, singles=0,
                            transaction_size=5)
    task = Task(scenario="delivery", client="confluent", bootstrap_servers="unused:9092", topic="t", timeout_s=5,
                producer_config={"transactional.id": "x"})
    run = DeliveryRun(Refused(), task, params, said.append)
    try:
        run.open()
    except RunFailed as failed:
        assert "init_transactions failed: the transactional.id is not authorized" in str(failed)
    else:
        raise AssertionError("the refused init_transactions did not end the run")
    assert run.outcome("").counters["sent"] == 10 and said == []  # the partial outcome sends no progress

"""What the delivery worker tests of both languages share: the checker's verdict on a topic, and a worker told to
finish while it sends."""

from kafkabench.core.launcher import LOCAL_WORKERS
from kafkabench.core.protocol import Finish, Progress, Ready, Result, Start, Task
from kafkabench.labs.delivery.checker import check
from kafkabench.labs.delivery.readback import read_spans, read_topic


def verdict(bootstrap, topic, history):
    return check([history], read_topic(bootstrap, topic), idempotent=False,
                 second_read=lambda missing: read_spans(bootstrap, topic, missing.spans()))


def told_to_finish(task: Task, ready_timeout_s: float, after_acked: int = 1000) -> Result:
    """The task's worker started, told to finish once `after_acked` of its messages were acknowledged; its result,
    once its process ended by itself (exit 0)."""
    worker = LOCAL_WORKERS.start(f"{task.client} delivery told to finish", task.client)
    try:
        worker.send(task)
        worker.receive(Ready, timeout_s=ready_timeout_s)
        worker.send(Start())
        while not isinstance(message := worker.next_message(60), Result):
            if isinstance(message, Progress) and message.acked >= after_acked:
                worker.send(Finish())
        assert worker.wait_exit(30) == 0
    finally:
        worker.stop()
    return message

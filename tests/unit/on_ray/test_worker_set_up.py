"""A Ray worker starts on a thread of its own (a run's workers start side by side): what goes wrong there reaches
the lab as the worker's first message, never as a hang."""

import pytest

pytest.importorskip("ray", reason="the ray extra is not installed")

from kafkabench.core.protocol import Finish, Ready  # noqa: E402
from kafkabench.core.worker_process import WorkerFailed  # noqa: E402
from kafkabench.on_ray.launcher import RayWorker  # noqa: E402


def test_a_worker_that_could_not_start_says_why_when_it_is_next_read():
    worker = RayWorker("producer 2", host=object(), group=None)
    worker.send(Finish())  # kept until the worker runs, which it never will

    def set_up(host):
        raise TimeoutError("no node took the actor")

    worker.set_up(set_up)
    with pytest.raises(WorkerFailed) as failed:
        worker.receive(Ready, timeout_s=10)
    assert str(failed.value) == "producer 2: could not start on Ray (TimeoutError: no node took the actor)"
    assert failed.value.kind == "config"  # as when it failed inside start() before
    assert not worker.wait_set_up(1) and worker.placement["node"] == ""
    worker.stop()  # returns at once: there is nothing to stop

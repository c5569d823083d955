"""Children die with this process, not with the thread that asked for them (one of the few unit tests that start a
process: a `sleep`, no Kafka)."""

import subprocess
import threading
import time

from kafkabench.processes import popen


def test_a_child_started_for_a_thread_that_ends_lives_on():
    started: list[subprocess.Popen] = []
    thread = threading.Thread(target=lambda: started.append(popen(["sleep", "30"])))
    thread.start()
    thread.join()
    try:
        time.sleep(0.3)  # the parent-death signal would have come when the thread ended
        assert started[0].poll() is None
    finally:
        started[0].kill()
        started[0].wait(5)

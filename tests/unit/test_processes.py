"""Children die with this process, not with the thread that asked for them (one of the few unit tests that start a
process: a `cat`, no Kafka)."""

import subprocess
import threading
from pathlib import Path

from kafkabench.processes import popen
from kafkabench.waiting import wait_until


def test_a_child_started_for_a_thread_that_ends_lives_on():
    started: list[subprocess.Popen] = []
    thread = threading.Thread(target=lambda: started.append(
        popen(["cat"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)))
    thread.start()
    thread.join()
    try:
        # join() returns a moment before the OS thread is gone, and the parent-death signal comes with that exit
        wait_until(lambda: not Path(f"/proc/self/task/{thread.native_id}").exists(), timeout_s=30,
                   what="the asking thread's OS thread to exit", interval_s=0.01)
        # a child that got the signal is dead by now (SIGKILL cannot be caught): only a live one echoes and exits 0
        echoed, _ = started[0].communicate(b"alive\n", timeout=30)
        assert (echoed, started[0].returncode) == (b"alive\n", 0)
    finally:
        if started[0].poll() is None:
            started[0].kill()
        started[0].wait(5)

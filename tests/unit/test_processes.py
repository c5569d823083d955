"""Children die with this process, not with the thread that asked for them, and are known by their start, which no
step of the wall clock moves (among the few unit tests that start a process: a `cat`, no Kafka)."""

import subprocess
import threading
from pathlib import Path

import psutil
import pytest

from kafkabench.processes import popen, running, started
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


def test_a_process_recorded_before_the_wall_clock_steps_is_still_known_after_it(monkeypatch):
    child = subprocess.Popen(["cat"], stdin=subprocess.PIPE)
    try:
        start = started(child.pid)
        before = psutil.Process(child.pid).create_time()
        boot = psutil.boot_time()
        monkeypatch.setattr(psutil._pslinux, "boot_time", lambda: boot + 21)  # what a 21 s step does to /proc/stat
        assert psutil.Process(child.pid).create_time() == before + 21  # psutil's create_time moves with the clock
        assert started(child.pid) == start and running(child.pid, start).pid == child.pid  # ours does not
        assert running(child.pid, start + 0.01) is None  # a process started at another moment is another process
    finally:
        child.kill()
        child.wait(5)


def test_a_process_that_exited_is_not_running_before_or_after_it_is_reaped():
    child = subprocess.Popen(["true"])
    start = started(child.pid)
    wait_until(lambda: psutil.Process(child.pid).status() == psutil.STATUS_ZOMBIE, timeout_s=30,
               what="the child to exit", interval_s=0.01)
    assert running(child.pid, start) is None  # a zombie: exited, its status not read yet
    child.wait(5)
    assert running(child.pid, start) is None and running(None, start) is None
    with pytest.raises(psutil.NoSuchProcess):
        started(child.pid)

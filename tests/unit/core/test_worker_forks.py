"""Python workers forked by a real fork server (no broker: each worker refuses its task or waits for one)."""

import os
import signal
import subprocess

import pytest

from kafkabench.core.protocol import Error, Task
from kafkabench.core.worker_forks import WorkerForks
from kafkabench.core.worker_process import WorkerFailed, WorkerProcess
from kafkabench.errors import KafkabenchError
from tests.conftest import wait_for

WAIT_S = 30  # a refusal takes milliseconds once the server is up; the first fork waits for the server's imports


@pytest.fixture(scope="module")
def forks():
    server = WorkerForks()
    yield server
    server.close()


def test_a_forked_worker_refuses_bad_params_as_an_execd_one_does_and_exits_2(forks):
    worker = WorkerProcess("w", process=forks.spawn("confluent"))
    worker.send(Task(scenario="produce", client="confluent", bootstrap_servers="127.0.0.1:1", topic="t",
                     payload_files=[], timeout_s=1, params={"count": 10, "rate_per_s": 0}))
    with pytest.raises(WorkerFailed, match="produce: params.rate_per_s must be > 0 or -1, got 0") as failed:
        worker.receive(Error, WAIT_S)
    assert failed.value.kind == "config"
    assert worker.wait_exit(WAIT_S) == 2


def test_a_forked_worker_has_the_callers_directory_and_a_session_of_its_own(forks, tmp_path, monkeypatch):
    forks.spawn("confluent").kill()  # the server started before the directory changed
    monkeypatch.chdir(tmp_path)
    process = forks.spawn("confluent")
    try:  # the child sets itself up a moment after the fork: its session comes last
        wait_for(lambda: os.getsid(process.pid) == process.pid, WAIT_S, "the worker's own session")
        assert os.readlink(f"/proc/{process.pid}/cwd") == str(tmp_path)
    finally:
        process.kill()
    assert process.wait(WAIT_S) == -signal.SIGKILL


def test_a_killed_worker_reports_its_signal_and_a_live_one_times_out(forks):
    process = forks.spawn("confluent")
    with pytest.raises(subprocess.TimeoutExpired):
        process.wait(0.2)
    assert process.poll() is None
    os.kill(process.pid, signal.SIGTERM)
    assert process.wait(WAIT_S) == -signal.SIGTERM
    process.kill()  # reaped: nothing is signalled
    assert process.returncode == -signal.SIGTERM


def test_a_closed_stdin_ends_a_waiting_worker(forks):
    worker = WorkerProcess("w", process=forks.spawn("confluent"))
    worker.stop(timeout_s=WAIT_S)  # an empty task line: a bad task, answered, then exit 2
    assert worker._popen.returncode == 2


def test_workers_die_with_their_server_and_no_new_one_is_forked():
    forks = WorkerForks()
    process = forks.spawn("confluent")
    forks._server.kill()
    assert process.wait(WAIT_S) == -signal.SIGKILL
    with pytest.raises(KafkabenchError, match="fork server is gone"):
        forks.spawn("confluent")
    with pytest.raises(ProcessLookupError):
        for _ in range(100):  # its parent-death signal may take a moment to land
            os.kill(process.pid, 0)
            subprocess.run(["sleep", "0.05"])

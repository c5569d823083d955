"""The Python worker's fork server: `python -m kafkabench.workers.fork_server FD`, one per orchestrator process.

It imports the Python worker once (pydantic's models, numpy: about 0.4 CPU-s a start), then forks a worker for each
request that arrives on the socket FD: the request carries the worker's stdin, stdout and stderr (three file
descriptors), its client, its working directory and its environment. A client's library is imported by the server
on the first request for it, before that fork, so no later worker of it imports it again. The server answers each
request with the child's pid and, once the child has ended, with its exit code as `subprocess` gives it (-N: killed
by signal N).

A forked child is the worker an exec'd `python -m kafkabench.workers.python_worker` would be: a session of its own,
killed when the server dies (which dies with the orchestrator), stdio on the three descriptors, and it ends through
the interpreter's own exit, as that worker does. The server ends when the orchestrator closes the socket.
"""

from __future__ import annotations

import contextlib
import ctypes
import importlib
import json
import os
import selectors
import signal
import socket
import sys

from kafkabench.workers import python_worker
from kafkabench.workers.adapters import ADAPTERS

PR_SET_PDEATHSIG = 1
REQUEST_BYTES = 1 << 20  # a request: cwd and environment, as JSON


class BecomeWorker(Exception):
    """Raised in a forked child: the server's loop unwinds and the child runs the worker."""


def serve(channel: socket.socket) -> None:
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w)
    signal.signal(signal.SIGCHLD, lambda *_: None)  # a handler, so SIGCHLD writes to the wake-up pipe
    selector = selectors.DefaultSelector()
    selector.register(channel, selectors.EVENT_READ)
    selector.register(wake_r, selectors.EVENT_READ)
    children: set[int] = set()
    while True:
        for key, _ in selector.select():
            if key.fileobj is channel:
                data, fds, _, _ = socket.recv_fds(channel, REQUEST_BYTES, 3)
                if not data:
                    return  # the orchestrator is gone or done
                request = json.loads(data)
                if request["client"] in ADAPTERS:
                    with contextlib.suppress(ImportError):  # not installed: its worker says so, as an exec'd one does
                        importlib.import_module(ADAPTERS[request["client"]][0])
                server, pid = os.getpid(), os.fork()
                if pid == 0:
                    selector.close()
                    for fd in (wake_r, wake_w, channel.fileno()):
                        os.close(fd)
                    become(request, fds, server)
                children.add(pid)
                for fd in fds:
                    os.close(fd)
                channel.send(json.dumps({"pid": pid}).encode())
            else:
                os.read(wake_r, 4096)
                for pid in list(children):
                    done, status = os.waitpid(pid, os.WNOHANG)
                    if done:
                        children.discard(pid)
                        channel.send(json.dumps({"exited": pid, "code": os.waitstatus_to_exitcode(status)}).encode())


def become(request: dict, fds: list[int], server: int) -> None:
    """In the child: the worker's parent-death signal, stdio, directory, environment and session."""
    signal.set_wakeup_fd(-1)
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != server:  # the server died before the signal was asked for
        os._exit(1)
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
        os.close(fd)
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    os.setsid()  # last: the session says the rest is done
    raise BecomeWorker


def main() -> int:
    channel = socket.socket(fileno=int(sys.argv[1]))
    try:
        serve(channel)
    except BecomeWorker:
        return python_worker.main()
    return 0


if __name__ == "__main__":
    sys.exit(main())

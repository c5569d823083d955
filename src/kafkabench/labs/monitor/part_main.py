"""A part of the monitor in its own process: `python -m kafkabench.labs.monitor.part_main PART`.

It reads its settings as one JSON line on stdin (the connection's secrets never appear in a process list), runs the
part, and writes each message as one JSON line to the pipe that was its stdout; anything a library prints goes to
stderr, which the serving process keeps the end of. Stdin closing is the signal to stop: the part finishes its round,
closes its clients and exits. A beat every BEAT_S, from a thread of its own, tells the serving process the part is
alive while a round waits out a broker that does not answer.
"""

from __future__ import annotations

import importlib
import json
import os
import sys
import threading

from kafkabench.connection import Connection
from kafkabench.labs.monitor.scenario import MonitorScenario

BEAT_S = 5.0


RUNS = {"prober": "kafkabench.labs.monitor.prober", "lag": "kafkabench.labs.monitor.lag_collector",
        "brokers": "kafkabench.labs.monitor.brokers"}  # each module's run(connection, scenario, send, stopping)


def main(name: str) -> None:
    messages = os.fdopen(os.dup(sys.stdout.fileno()), "w", buffering=1)
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())  # a library's stray print cannot break the message stream
    settings = json.loads(sys.stdin.readline())
    connection = Connection(settings["bootstrap_servers"], tuple(map(tuple, settings["security"])))
    scenario = MonitorScenario(**settings["scenario"])
    stopping = threading.Event()
    threading.Thread(target=lambda: (sys.stdin.read(), stopping.set()), daemon=True, name="stdin-closed").start()
    lock = threading.Lock()

    def send(message: dict) -> None:
        with lock:
            messages.write(json.dumps(message) + "\n")

    def beat() -> None:
        while not stopping.wait(BEAT_S):
            send({"kind": "beat"})

    threading.Thread(target=beat, daemon=True, name="beat").start()
    importlib.import_module(RUNS[name]).run(connection, scenario, send, stopping)


if __name__ == "__main__":
    main(sys.argv[1])

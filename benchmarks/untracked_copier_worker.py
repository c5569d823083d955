"""kafkabench's Python worker with the delivery consumer's liveness tracking taken out, for
benchmarks/liveness_cost.py only: no watchdog thread and no call labels; progress reported from the copy loop every
0.2 s, as the consumer did before it was watched. Everything else is the worker the delivery lab runs."""

from __future__ import annotations

import contextlib
import sys
import time

from kafkabench.workers import delivery_consumer_confluent as confluent
from kafkabench.workers.call_watch import PROGRESS_S
from kafkabench.workers.python_worker import main


class UntrackedConfluentConsumerRun(confluent.ConfluentConsumerRun):
    def call(self, what: str):
        return contextlib.nullcontext()

    def open(self) -> None:
        self._open_clients()
        self._subscribe()

    def run(self, stop) -> None:
        step, due = self._copy, 0.0
        while not stop.is_set():
            records = self._poll()
            if records:
                if self._first_ns is None:
                    self._first_ns = time.monotonic_ns()
                step(records)
            if (now := time.monotonic()) >= due:
                due = now + PROGRESS_S
                self._report()
        self._report()


confluent.ConfluentConsumerRun = UntrackedConfluentConsumerRun  # what python_worker instantiates for confluent

if __name__ == "__main__":
    sys.exit(main())

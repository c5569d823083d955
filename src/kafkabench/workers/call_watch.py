"""The watchdog over a worker's calls into its client (the delivery lab's producers, consumers and copiers).

A worker runs each blocking client call under `call(what)`. A thread looks every PROGRESS_S: a call in progress for
SHOWN_AFTER_S or more is named in the worker's progress (`calling`, where a stalled process is), and one that has
not returned within the bound (the task's timeout plus WATCH_MARGIN_S: the client's own bounded calls are given the
timeout first) ends the process with an `error` naming the call and keeping what was done so far. A call stuck
inside a client cannot be interrupted from Python, and a close might wait on the same stuck client: the process
ends instead, and the orchestrator replaces it.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from collections.abc import Callable, Iterator

from kafkabench.core.protocol import Error, Outcome

PROGRESS_S = 0.2
SHOWN_AFTER_S = 1.0  # a call in progress this long is named in the progress reports
WATCH_MARGIN_S = 5.0  # beyond the task's timeout, which the client's own bounded calls are given first
EXIT_CODE = 3


class CallWatch:
    def __init__(self, client: str, timeout_s: float, report: Callable[[object], None],
                 partial: Callable[[], Outcome], look: Callable[[], None] = lambda: None) -> None:
        """`look` runs on the watchdog's thread after each look at the call (a consumer reports its progress there);
        `partial` is what the worker measured, for the error that ends it."""
        self.client, self.report, self.partial, self.look = client, report, partial, look
        self.bound_s = timeout_s + WATCH_MARGIN_S
        self._call: tuple[str, float] | None = None  # the client call in progress, and when it began (monotonic)

    def start(self) -> None:
        threading.Thread(target=self._watch, name="watchdog", daemon=True).start()

    @contextlib.contextmanager
    def call(self, what: str) -> Iterator[None]:
        """A client call under the bound (inside another, the outer one is watched again after it)."""
        outer, self._call = self._call, (what, time.monotonic())
        try:
            yield
        finally:
            self._call = outer

    def calling(self) -> dict:
        """The call in progress, as a progress report names it: only once it has taken SHOWN_AFTER_S."""
        call = self._call
        held = time.monotonic() - call[1] if call else 0.0
        return {"calling": call[0], "calling_s": round(held, 3)} if call and held >= SHOWN_AFTER_S else {}

    def _watch(self) -> None:
        while True:
            time.sleep(PROGRESS_S)
            call = self._call
            if call is not None and time.monotonic() - call[1] > self.bound_s:
                self._give_up(call[0])
                return
            self.look()

    def _give_up(self, what: str) -> None:
        self.report(Error(message=f"{self.client}'s {what} did not return within {self.bound_s:g} s (the task's "
                                  f"timeout_s + {WATCH_MARGIN_S:g} s)", kind="timeout", partial=self.partial()))
        os._exit(EXIT_CODE)

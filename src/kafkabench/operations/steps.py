"""One node restarted as a step of an operation (a rolling restart's, an upgrade's): the restart, then the topic's
ISR whole again, each moment in the run's seconds."""

from __future__ import annotations

from collections.abc import Callable

from kafkabench.cluster.faults import Faults
from kafkabench.errors import KafkabenchError


def restarted(step: dict, restart: Callable[[], None], faults: Faults, topic: str, clock: Callable[[], float],
              heal_timeout_s: float, what: str) -> None:
    """`restart` (it returns once the node serves: `serving_s`), then every partition of `topic` at its full ISR
    within `heal_timeout_s` (`in_isr_s`); else one error saying `what` was done and what did not follow."""
    restart()
    step["serving_s"] = round(clock(), 3)
    try:
        faults.wait_healthy(heal_timeout_s, [topic])
    except KafkabenchError as exc:
        raise KafkabenchError(f"{what} but {topic} did not get its full ISR back within {heal_timeout_s:g} s: "
                              f"{exc}") from exc
    step["in_isr_s"] = round(clock(), 3)

"""`add-broker[,throttle=BYTES]`: a new broker joins the embedded cluster while the load runs, then takes its share of
the topic's replicas (their count / the brokers', each from the most loaded broker of its partition, reassign.onto),
moved as `reassign` moves them: throttled if asked, each partition's move timed and its new replica's bytes read."""

from __future__ import annotations

from collections.abc import Callable

from kafkabench.admin import KafkaAdmin
from kafkabench.cluster.faults import Faults
from kafkabench.connection import Connection
from kafkabench.operations.reassign import ADMIN_TIMEOUT_S, carry_out, moved_bytes, onto, placement, throttled
from kafkabench.operations.spec import OperationSpec


def add(spec: OperationSpec, faults: Faults, bootstrap: str | Connection, topic: str, clock: Callable[[], float],
        timeout_s: float) -> tuple[str, list[dict], str | None]:
    """What was done, in words; the broker's step (started, serving) and a step per partition moved onto it; what
    went wrong once the moves were submitted (None: nothing)."""
    joined = {"broker": None, "start_s": round(clock(), 3)}
    joined["broker"] = new = faults.add_broker()
    joined["serving_s"] = round(clock(), 3)
    throttle = spec.number("throttle")
    with KafkaAdmin(bootstrap, timeout_s=ADMIN_TIMEOUT_S) as admin:
        before = placement(admin, topic)
        moves = onto(before, sorted({*admin.brokers(), new}), new)
        steps, problems = carry_out(admin, topic, before, moves, throttle, clock, timeout_s)
    what = (f"broker {new} added, serving {joined['serving_s'] - joined['start_s']:.1f} s after its start; then "
            + (f"partition(s) {', '.join(str(step['partition']) for step in steps)} of {topic} given a replica on it "
               f"({throttled(throttle)}, {moved_bytes(steps):,} bytes on it when done)" if steps else
               f"nothing of {topic} to move onto it (its share of the replicas rounds down to 0)"))
    return what, [joined, *steps], "; ".join(problems) or None

"""What does watching a copier's liveness cost it? kafkabench's confluent copier, watched as the delivery lab watches
it / the same copier with the watching taken out.

    .venv/bin/python benchmarks/liveness_cost.py [--count 400000] [--batch 500] [--repeats 6] [-X KEY=VALUE ...]
        [--worker-only] [--bootstrap-servers HOST:PORT]

Watched: the worker the lab runs (its watchdog thread reporting progress every 0.2 s and bounding every client call),
and on the orchestrator's side the group's committed offsets against the input's end looked at every 0.5 s
(admin.GroupLag, as consumers.watch.GroupWatch does) and each report noted in a core.liveness.Track.
Unwatched: benchmarks/untracked_copier_worker.py (the same ConsumerRun, no watchdog, no call labels, progress from
the copy loop) and no looks. Both copy the same filled input (harness.filled_topic) to a fresh output
topic, in a group of their own; one discarded pass each, then --repeats in ABBA order. records/s = count / (the
first poll that returned records -> the last commit), as the worker measures itself. Prints each repeat, the
medians and the ratio watched / unwatched (median of the per-repeat ratios); target >= 0.97. --worker-only: the
watched side without the orchestrator's looks (what the watchdog alone costs).
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path

from copier_overhead import COPY_S
from harness import PARTITIONS, filled_topic, open_target

from kafkabench.admin import GroupLag, KafkaAdmin
from kafkabench.core.liveness import Track
from kafkabench.core.protocol import DeliveryConsumerParams, Finish, Progress, Ready, Result, Start, Task, task_params
from kafkabench.core.worker_process import WorkerProcess
from kafkabench.consumers.watch import LOOK_S

HERE = Path(__file__).parent
TARGET = 0.97


def copy_rate(target, source: str, count: int, batch: int, settings: dict, watched: bool, looks: bool) -> float:
    run = uuid.uuid4().hex[:8]
    output, group = f"liveness-output-{run}", f"liveness-{run}"
    with KafkaAdmin(target.connection) as admin:
        admin.create_topic(output, PARTITIONS, 1)
    command = [sys.executable, "-m", "kafkabench.workers.python_worker"] if watched else \
        [sys.executable, str(HERE / "untracked_copier_worker.py")]
    worker, stop, track = WorkerProcess(f"copier {'watched' if watched else 'unwatched'}", command), \
        threading.Event(), Track()
    looker = threading.Thread(target=_look, args=(target, group, source, track, stop), daemon=True)
    try:
        worker.send(Task(scenario="delivery_consumer", client="confluent", bootstrap_servers=target.bootstrap_servers,
                         topic=source, producer_config={**settings, "transactional.id": f"copier-{run}"}, timeout_s=60,
                         params=task_params(DeliveryConsumerParams(mode="copy", group=group, count=count, batch=batch,
                                                                   output_topic=output))))
        worker.receive(Ready, timeout_s=120)
        worker.send(Start())
        if watched and looks:
            looker.start()
        deadline, copied, result = time.monotonic() + COPY_S, 0, None
        while copied < count and time.monotonic() < deadline:
            message = worker.next_message(0.2)
            if isinstance(message, Progress):
                copied = message.acked or 0
                if watched:
                    track.note(time.monotonic(), count=message.done + copied)
        worker.send(Finish())
        while not isinstance(result, Result) and time.monotonic() < deadline:
            result = worker.next_message(0.2)
    finally:
        stop.set()
        worker.stop()
        with KafkaAdmin(target.connection) as admin:
            admin.delete_topic(output)
    assert isinstance(result, Result) and result.counters["processed"] == count, result
    return count / result.duration_s


def _look(target, group: str, source: str, track: Track, stop: threading.Event) -> None:
    with GroupLag(target.connection, group, source, PARTITIONS) as lag:
        while not stop.wait(LOOK_S):
            track.note(time.monotonic(), waiting=any(lag.behind().values()))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=400_000)
    parser.add_argument("--size", type=int, default=64)
    parser.add_argument("--batch", type=int, default=500)
    parser.add_argument("--repeats", type=int, default=6)
    parser.add_argument("--worker-only", action="store_true")
    parser.add_argument("-X", dest="settings", action="append", default=[], metavar="KEY=VALUE")
    parser.add_argument("--bootstrap-servers")
    args = parser.parse_args()
    settings = dict(item.split("=", 1) for item in args.settings)
    with contextlib.ExitStack() as stack:
        work = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="kafkabench-liveness-cost-")))
        target = open_target(stack, args.bootstrap_servers, work)
        source = stack.enter_context(filled_topic(target, "liveness-input", args.count, args.size))
        sides = {name: (lambda watched=name == "watched": copy_rate(target, source, args.count, args.batch, settings,
                                                                    watched, not args.worker_only))
                 for name in ("watched", "unwatched")}
        for run in sides.values():  # discarded: broker JIT, page cache
            run()
        rates: dict[str, list[float]] = {name: [] for name in sides}
        for repeat in range(args.repeats):
            for name in (["watched", "unwatched"] if repeat % 2 == 0 else ["unwatched", "watched"]):
                rates[name].append(sides[name]())
            print(f"repeat {repeat + 1}: " + ", ".join(f"{name} {rates[name][-1]:,.0f} records/s" for name in sides),
                  flush=True)
    ratio = statistics.median(ours / theirs for ours, theirs in zip(rates["watched"], rates["unwatched"]))
    given = "".join(f", {key}={value}" for key, value in settings.items())
    print(f"confluent copier, {args.count:,} x {args.size} B in transactions of <= {args.batch}{given}: watched"
          f"{' (the worker alone)' if args.worker_only else ''} "
          f"{statistics.median(rates['watched']):,.0f} records/s, unwatched {statistics.median(rates['unwatched']):,.0f} "
          f"records/s, ratio {ratio:.3f} (target >= {TARGET:.2f}: {'met' if ratio >= TARGET else 'MISSED'})")


if __name__ == "__main__":
    main()

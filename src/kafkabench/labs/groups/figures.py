"""What a change cost a groups cell, from what was recorded: the members' histories (each record processed when, the
producer's history saying where it went), the coordinator's states and the group's lag.

- gaps (labs.groups.gaps): each partition's longest unread span overlapping the change's window (from its first step
  until the group had committed everything), its worst and median, and the stop-the-world time; the same read over
  the steady time before the change, as the floor to set them beside;
- time to stable: from the change's first step until the coordinator last said STABLE after saying anything else
  (for a KIP-848 group: with every member holding its target assignment); 0 when it never left STABLE;
- lag: the records behind the group's committed offsets, its peak after the change began, the steady peak before it,
  and the time from the change's first step until lag was back at that steady peak;
- records processed more than once and never, of those the producer had acknowledged; the rebalances each member
  process went through (as its client's listener counted assignments);
- new partitions (add-partitions): per partition added, from its first record's timestamp until the group processed
  that record, the slowest of them; and how many acknowledged records in them the group never read;
- a new topic (subscribe-topic): the same per partition of the topic the members' pattern matched once it was
  created; its records are counted with the first topic's (processed twice, never), and its partitions numbered on
  after the first topic's ("new 0", "new 1", ... where they are named);
- the pace: records processed per second, from the first processing to the last;
- redelivery (share groups): each acknowledged record's delivery count as the broker gave it at the last delivery a
  member received (the highest a history stored), the member processes that received it, and when the redelivered
  records were processed again.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from kafkabench.core.delivery_history import ACKNOWLEDGED, History
from kafkabench.core.delivery_processed import SECOND_INPUT, Processed, totals
from kafkabench.core.results import Run
from kafkabench.labs.groups.gaps import NS, Processings, Spans

MAX_WINDOWS = 150  # the chart's columns per cell


@dataclass
class ChangeTimes:
    begun_mono: float | None = None
    begun_ns: int | None = None  # wall clock: the histories' clock
    ended_mono: float | None = None
    caught_up_ns: int | None = None

    def begin(self) -> None:
        self.begun_mono, self.begun_ns = time.monotonic(), time.time_ns()

    def end(self) -> None:
        self.ended_mono = time.monotonic()

    def caught_up(self) -> None:
        self.caught_up_ns = time.time_ns()


@dataclass(frozen=True)
class Input:
    """One input topic as the cell recorded it: its producer's history, each member process's history of it, and
    the number its partition 0 has among the cell's partitions."""

    produced: History
    histories: list[Processed]
    numbered_from: int = 0

    @property
    def acked(self) -> np.ndarray:
        return self.produced.status == ACKNOWLEDGED

    @classmethod
    def read(cls, cell_dir: Path, members, second_producer: str, numbered_from: int) -> list[Input]:
        """The cell's inputs: its topic, and a subscribe-topic's new one (`second_producer`: its producer's history
        directory, "" for none) when that producer started."""
        inputs = [cls(History.open_mapped(cell_dir / "producer"),
                      [Processed.open(member.history_dir) for member in members.members])]
        if second_producer and (cell_dir / second_producer).is_dir() and any((cell_dir / second_producer).iterdir()):
            inputs.append(cls(History.open_mapped(cell_dir / second_producer),
                              [Processed.open(member.history_dir / SECOND_INPUT) for member in members.members],
                              numbered_from))
        return inputs


def fill(run: Run, cell_dir: Path, members, change: ChangeTimes, states: list, looks: list[tuple[float, int]],
         second_producer: str = "") -> None:
    first_new = run.params["partitions"]
    inputs = Input.read(cell_dir, members, second_producer, first_new)
    redeliveries(run, inputs[0].histories, inputs[0].acked, change.begun_ns)
    acked, times = [one.acked for one in inputs], [totals(one.histories) for one in inputs]
    run.counters.update(records=sum(int(a.sum()) for a in acked),
                        processed_twice=sum(int(np.count_nonzero(a & (t >= 2))) for a, t in zip(acked, times)),
                        never_processed=sum(int(np.count_nonzero(a & (t == 0))) for a, t in zip(acked, times)),
                        processes=len(members.members),
                        rebalances=sum(int(m.result.counters.get("rebalances", 0)) for m in members.members if m.result))
    if change.begun_ns is None:
        run.params["change_not_made"] = "the producer acknowledged nothing, so the change never began"
        return
    run.timings["change_s"] = round(change.ended_mono - change.begun_mono, 3)
    processings = Processings.joined([Processings.of(one.produced.partition + one.numbered_from, one.histories)
                                      for one in inputs])
    label = str if "new_topic" not in run.params else \
        (lambda partition: str(partition) if partition < first_new else f"new {partition - first_new}")
    if len(processings.at_ns) > 1 and (span_ns := int(processings.at_ns.max() - processings.at_ns.min())) > 0:
        run.throughput["processed_per_s"] = round(len(processings.at_ns) / (span_ns / NS), 1)
    spans = Spans.of(processings)
    window_end_ns = change.caught_up_ns or time.time_ns()
    run.timings["caught_up_s"] = round((window_end_ns - change.begun_ns) / NS, 3)
    during = spans.gaps((change.begun_ns, window_end_ns))
    if not len(processings.at_ns):
        return {}
    first = int(processings.at_ns.min()) if len(processings.at_ns) else change.begun_ns
    before = spans.gaps((first, change.begun_ns), whole=True)
    run.timings.update(stop_the_world_s=round(during.stop_the_world_s, 3), worst_gap_s=round(during.worst_s, 3),
                       median_gap_s=round(during.median_s, 3), steady_worst_gap_s=round(before.worst_s, 3),
                       steady_stop_the_world_s=round(before.stop_the_world_s, 3))
    run.params["gaps_s"] = {label(p): round(s, 3) for p, s in sorted(during.longest_s.items())}
    run.params["processed"] = per_partition(processings, change, label)
    if "partitions_after" in run.params:  # an add-partitions: the new ones numbered from the topic's first count
        waited = first_reads(processings, inputs[0].produced.partition[acked[0]], first_new)
        run.params["new_partitions_s"] = {str(p): s for p, s in waited.items()}
        _slowest(run, waited, "new_partitions")
    if "new_topic" in run.params:
        second = inputs[1:]
        waited = first_reads(processings, second[0].produced.partition[acked[1]] + first_new, first_new) if second \
            else {}
        new = run.params["new_topic"]
        new["first_read_s"] = {str(p - first_new): s for p, s in waited.items()}
        _slowest(run, waited, "new_topic")
        there = processings.partition >= first_new
        if "created_s" in new and there.any():  # from the topic's creation: its first record (the producer's start)
            created_ns = change.begun_ns + round(new["created_s"] * NS)  # and the group's first processing there
            new["first_written_s"] = round((int(processings.created_ns[there].min()) - created_ns) / NS, 3)
            new["first_processed_s"] = round((int(processings.at_ns[there].min()) - created_ns) / NS, 3)
    if (stable := time_to_stable(states, change.begun_mono)) is not None:
        run.timings["time_to_stable_s"] = stable
    run.params["states"] = transitions(states, change.begun_mono)
    lag = lag_figures(looks, change.begun_mono)
    run.counters.update({key: value for key, value in lag.items() if key.startswith("lag_peak")})
    if "lag_back_s" in lag:
        run.timings["lag_back_s"] = lag["lag_back_s"]


def first_reads(processings: Processings, acked_partitions: np.ndarray, first_new: int) -> dict[int, float | None]:
    """Per new partition (numbered from `first_new`) that acknowledged records went to: the seconds from its first
    record's timestamp until the group processed that record (None: never)."""
    written = sorted(int(p) for p in np.unique(acked_partitions[acked_partitions >= first_new]))
    waited: dict[int, float | None] = {}
    for partition in written:
        here = processings.partition == partition
        if not here.any():
            waited[partition] = None
            continue
        first = int(np.argmin(processings.created_ns[here]))  # the earliest record processed there
        waited[partition] = round((int(processings.at_ns[here][first]) - int(processings.created_ns[here][first])) / NS, 3)
    return waited


def _slowest(run: Run, waited: dict[int, float | None], name: str) -> None:
    """`counters.{name}_unread`: the new partitions never read; `timings.{name}_read_s`: the slowest first read, when
    every one was read."""
    run.counters[f"{name}_unread"] = sum(value is None for value in waited.values())
    if waited and None not in waited.values():
        run.timings[f"{name}_read_s"] = max(waited.values())


def per_partition(processings: Processings, change: ChangeTimes, label=str, most: int = MAX_WINDOWS) -> dict:
    """Records processed per partition and window (windows of 0.1 s or more, at most `most` of them), from the first
    processing on, and the change's first and last step in the same seconds: what the chart draws ({}: nothing was
    processed). Each row's name is `label(partition)`."""
    first = int(processings.at_ns.min())
    span_s = (int(processings.at_ns.max()) - first) / NS
    window_s = max(0.1, math.ceil(span_s / most * 10) / 10)
    index = (processings.at_ns - first) // round(window_s * NS)  # integers: 0.3 / 0.1 is 2.999... in floats
    partitions = int(processings.partition.max()) + 1
    counts = np.zeros((partitions, int(index.max()) + 1), np.int64)
    np.add.at(counts, (processings.partition, index), 1)
    ended_ns = change.begun_ns + int((change.ended_mono - change.begun_mono) * NS)
    return {"window_s": window_s, "counts": counts.tolist(), "rows": [label(p) for p in range(partitions)],
            "change_s": [round((change.begun_ns - first) / NS, 3), round((ended_ns - first) / NS, 3)]}


def time_to_stable(states: list, begun: float) -> float | None:
    """Seconds from `begun` until the coordinator last became stable after anything else; 0.0 if it never left stable
    after `begun`; None when it was not stable at the end (or never asked)."""
    after = [(at, state) for at, state in states if at >= begun]
    if not after or not after[-1][1].stable:
        return None
    unstable = [index for index, (_, state) in enumerate(after) if not state.stable]
    if not unstable:
        return 0.0
    return round(after[unstable[-1] + 1][0] - begun, 3)


def transitions(states: list, begun: float) -> list[str]:
    """The coordinator's states as they changed, in seconds from the change's first step."""
    said, last = [], None
    for at, state in states:
        shown = state.said
        if shown != last:
            said.append(f"{at - begun:+.1f} s: {shown}")
            last = shown
    return said


def lag_figures(looks: list[tuple[float, int]], begun: float) -> dict:
    before = [behind for at, behind in looks if at < begun]
    after = [(at, behind) for at, behind in looks if at >= begun]
    if not after:
        return {}
    steady = max(before, default=0)
    peak_at, peak = max(after, key=lambda look: look[1])
    figures = {"lag_peak": peak, "lag_peak_steady": steady}
    back = next((at for at, behind in after if at >= peak_at and behind <= steady), None)
    if back is not None:
        figures["lag_back_s"] = round(back - begun, 3)
    return figures


def all_reading(run: Run, first_members) -> None:
    """A share group's start, from its first members' histories: `timings.all_members_reading_s`, from the first
    record's creation (its timestamp) until the last of those members processed its first record (the earliest
    processing its history keeps). Absent when one of them processed nothing (`params.idle_members` says which)."""
    histories = [Processed.open(member.history_dir) for member in first_members]
    firsts = [history.processed_at[history.processed_at > 0] for history in histories]
    created = np.concatenate([history.created_at[history.created_at > 0] for history in histories])
    if all(len(first) for first in firsts) and len(created):
        last_first_ns = max(int(first.min()) for first in firsts)
        run.timings["all_members_reading_s"] = round((last_first_ns - int(created.min()) * 1_000_000) / NS, 3)


def redeliveries(run: Run, histories: list[Processed], acked: np.ndarray, begun_ns: int | None) -> None:
    """The share figures of a cell: records redelivered (the broker's delivery count 2 or more), how many at each
    count, deliveries the broker counted beyond the member processes that received the record (acquired by a member
    killed before its application saw them), and the seconds from the change's first step until the redelivered
    records were processed again (first, median, last)."""
    delivered = [history.delivered for history in histories if history.delivered is not None]
    if not delivered:
        return
    stacked = np.vstack(delivered)
    count = stacked.max(axis=0)[acked].astype(np.int64)
    received = np.count_nonzero(stacked, axis=0)[acked]
    values, records = np.unique(count[count > 0], return_counts=True)
    run.params["delivery_counts"] = {str(value): int(n) for value, n in zip(values.tolist(), records.tolist())}
    run.counters.update(redelivered=int(np.count_nonzero(count >= 2)),
                        deliveries_unseen=int(np.maximum(count - received, 0).sum()))
    if begun_ns is None:
        return
    again = np.concatenate([history.processed_at[acked & (history.delivered >= 2) & (history.processed_at > 0)]
                            for history in histories if history.delivered is not None])
    waited = (again[again >= begun_ns] - begun_ns) / NS
    if len(waited):
        run.timings.update(redelivered_first_s=round(float(waited.min()), 3),
                           redelivered_median_s=round(float(np.median(waited)), 3),
                           redelivered_last_s=round(float(waited.max()), 3))

"""Probe sequences per partition: what `kafkabench monitor` counts from them (after LinkedIn's Xinfra Monitor, which
numbers its probes per partition, and KMinion's end-to-end probe, which calls a probe lost when it is not back
within its SLA).

Each partition's probes carry sequence 0, 1, 2, ... in the order they were sent. For every probe read back:

- **roundtrip**: its send time to the moment it was read, on the one monotonic clock of the process;
- **duplicated**: a sequence read again (a retried write that landed twice, or a consumer that re-read);
- **out of order**: a first read of a sequence below the highest already read in the partition;
- **lost**: a probe sent and not read back within the SLA. A probe read after its SLA ran out was counted lost
  once and is now counted `late`, not taken back: a counter never goes down.

Memory stays flat whatever the run's length: a partition keeps the probes still within their SLA (a ring of
SLA / interval entries, no more), and which of the recent sequences were read as one bit each over the same
span. A sequence older than that span is no longer tracked: read again, it is counted `expired`, not judged.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field


@dataclass
class PartitionCounts:
    sent: int = 0
    read: int = 0  # first reads of probes of this instance
    lost: int = 0
    late: int = 0
    duplicated: int = 0
    out_of_order: int = 0
    expired: int = 0  # read after its sequence left the tracked span: neither a duplicate nor a first read known


@dataclass
class Roundtrip:
    partition: int
    sequence: int
    seconds: float


@dataclass
class _Partition:
    pending: deque = field(default_factory=deque)  # (sequence, sent_s, tag), in sequence order, within the SLA
    seen: deque = field(default_factory=deque)  # read bits of sequences seen_base, seen_base + 1, ...
    seen_base: int = 0
    highest_read: int = -1
    next_sequence: int = 0
    counts: PartitionCounts = field(default_factory=PartitionCounts)


class SequenceTracker:
    """The probes of one monitor instance, per partition: `sent` as a probe is handed to the producer, `read` when
    the consumer has it, and `expire(now)` every tick to count the probes whose SLA ran out."""

    def __init__(self, sla_s: float, span: int) -> None:
        if sla_s <= 0 or span < 1:
            raise ValueError("sla_s must be > 0 and span >= 1")
        self.sla_s = sla_s
        self.span = span  # sequences tracked per partition: at least SLA / interval, with room for bursts
        self._partitions: dict[int, _Partition] = {}

    def next_sequence(self, partition: int) -> int:
        return self._partition(partition).next_sequence

    def sent(self, partition: int, sent_s: float, tag: int = -1) -> int:
        """A new probe of `partition`; its sequence. `tag` (the partition's leader then) comes back with it from
        `expire` if it is lost."""
        state = self._partition(partition)
        sequence = state.next_sequence
        state.next_sequence += 1
        state.counts.sent += 1
        state.pending.append((sequence, sent_s, tag))
        state.seen.append(False)
        while len(state.seen) > self.span:
            state.seen.popleft()
            state.seen_base += 1
        while len(state.pending) > self.span:  # more in flight than the span holds: the oldest is given up
            state.pending.popleft()
            state.counts.lost += 1
        return sequence

    def read(self, partition: int, sequence: int, read_s: float, sent_s: float) -> Roundtrip | None:
        """A probe read back; its roundtrip on a first read within its SLA, else None."""
        state = self._partition(partition)
        at = sequence - state.seen_base
        if sequence >= state.next_sequence or at < 0:
            state.counts.expired += 1
            return None
        if state.seen[at]:
            state.counts.duplicated += 1
            return None
        state.seen[at] = True
        state.counts.read += 1
        if sequence < state.highest_read:
            state.counts.out_of_order += 1
        state.highest_read = max(state.highest_read, sequence)
        if not self._take_pending(state, sequence):
            state.counts.late += 1
            return None
        return Roundtrip(partition, sequence, read_s - sent_s)

    def expire(self, now_s: float) -> list[tuple[int, int, int]]:
        """(partition, sequence, tag) of each probe whose SLA ran out unread, now counted lost."""
        gone = []
        for partition, state in self._partitions.items():
            while state.pending and now_s - state.pending[0][1] > self.sla_s:
                sequence, _, tag = state.pending.popleft()
                state.counts.lost += 1
                gone.append((partition, sequence, tag))
        return gone

    def counts(self, partition: int) -> PartitionCounts:
        return self._partition(partition).counts

    @property
    def partitions(self) -> list[int]:
        return sorted(self._partitions)

    def _partition(self, partition: int) -> _Partition:
        state = self._partitions.get(partition)
        if state is None:
            state = self._partitions[partition] = _Partition()
        return state

    @staticmethod
    def _take_pending(state: _Partition, sequence: int) -> bool:
        """Remove the probe from the pending ring if it is still there (read within its SLA)."""
        pending = state.pending
        if not pending or sequence < pending[0][0]:
            return False
        index = sequence - pending[0][0]
        if index < len(pending) and pending[index][0] == sequence:
            del pending[index]
            return True
        for position, (waiting, _, _) in enumerate(pending):  # gaps from earlier reads: a short scan
            if waiting == sequence:
                del pending[position]
                return True
        return False

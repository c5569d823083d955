"""What one consumer of a delivery run did: how many times it processed each input message, and what it committed.

The consumer side's twin of `delivery_history`: written by a consumer worker (Python or Java) as it goes, read by
the checker after the run, so it sits below both. In a directory of its own, one per consumer process:

- `processed.npy` (uint8, one per input sequence, mapped): how many times this process processed the message,
  saturating at 255. A count is in the file as soon as it is stored: a consumer killed with SIGKILL keeps all it
  did.
- `processed_at.npy` (int64 per input sequence, mapped): when this process last processed the message, in wall-clock
  ns (0: never); `created_at.npy` (int64): the record's own timestamp (ms), as the consumer read it. Together, the
  time each record waited and when each partition was read (labs.groups.gaps).
- `delivered.npy` (uint8 per input sequence, mapped; a share group's member only): the delivery count the broker gave
  the message when this process last received it (KIP-932: 1 the first time, one more at each redelivery), stored
  before it is processed (0: never received).
- `processed.meta`: "FORMAT PRODUCER COUNT", the input producer whose ids the values carry and how many it sent.
- `commits.txt`: one line per offset commit the client confirmed, "PARTITION NEXT_OFFSET" per partition, joined by
  spaces, written after the commit returned and before anything else is done: the consumer's own account of
  where a successor starts.

A member that reads a second input topic (a groups cell's subscribe-topic) keeps that topic's history in the
`SECOND_INPUT` directory inside its own (the same files, for the second topic's producer and count); its commits stay
in the first, the second topic's partitions numbered on after the first's.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from kafkabench.core.delivery_history import HistoryFileError

FORMAT = 1
COUNTS, META, COMMITS = "processed.npy", "processed.meta", "commits.txt"
PROCESSED_AT, CREATED_AT, DELIVERED = "processed_at.npy", "created_at.npy", "delivered.npy"
SECOND_INPUT = "second-input"
SATURATED = 255


class Processed:
    """One consumer process's processed counts, mapped to its files (`create`) or read back (`open`)."""

    def __init__(self, producer: int, counts: np.ndarray, commits: list[dict[int, int]] | None = None,
                 processed_at: np.ndarray | None = None, created_at: np.ndarray | None = None,
                 delivered: np.ndarray | None = None) -> None:
        self.producer, self.counts = producer, counts
        self.commits = commits or []  # each commit: partition -> the next offset to read
        self.processed_at, self.created_at = processed_at, created_at  # None in a history written before they were
        self.delivered = delivered  # None: not a share group's member

    @classmethod
    def create(cls, directory: Path, producer: int, count: int, delivered: bool = False) -> Processed:
        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        counts = np.lib.format.open_memmap(directory / COUNTS, mode="w+", dtype=np.uint8, shape=(count,))
        times = [np.lib.format.open_memmap(directory / name, mode="w+", dtype=np.int64, shape=(count,))
                 for name in (PROCESSED_AT, CREATED_AT)]
        deliveries = np.lib.format.open_memmap(directory / DELIVERED, mode="w+", dtype=np.uint8, shape=(count,)) \
            if delivered else None
        (directory / META).write_text(f"{FORMAT} {producer} {count}\n")
        (directory / COMMITS).write_text("")
        return cls(producer, counts, None, *times, deliveries)

    @classmethod
    def open(cls, directory: Path) -> Processed:
        directory = Path(directory)
        try:
            version, producer, count = (int(word) for word in (directory / META).read_text().split())
            counts = np.load(directory / COUNTS, allow_pickle=False)
            if version != FORMAT or counts.dtype != np.uint8 or counts.shape != (count,):
                raise ValueError(f"{COUNTS}: {counts.dtype}{list(counts.shape)}, expected uint8[{count}]")
            commits = [_commit(line) for line in (directory / COMMITS).read_text().splitlines() if line.strip()]
            times = [_array(directory / name, count, np.int64) for name in (PROCESSED_AT, CREATED_AT)]
            delivered = _array(directory / DELIVERED, count, np.uint8)
        except (OSError, ValueError) as error:
            raise HistoryFileError(f"{directory}: not a readable consumer history ({error})") from error
        return cls(producer, counts, commits, *times, delivered)

    def record(self, sequence: int, at_ns: int, created_ms: int) -> None:
        """The message processed once more, now (`at_ns`, wall clock); `created_ms` is the record's timestamp."""
        if (count := self.counts[sequence]) < SATURATED:
            self.counts[sequence] = count + 1
        self.processed_at[sequence], self.created_at[sequence] = at_ns, created_ms

    def record_many(self, sequences: np.ndarray, at_ns: int, created_ms: np.ndarray) -> None:
        """A batch of messages each processed once more, all at `at_ns` (a sequence twice in it counts twice), as
        `record` would leave them one by one."""
        unique, times = np.unique(sequences, return_counts=True)
        self.counts[unique] = np.minimum(self.counts[unique].astype(np.int64) + times, SATURATED)
        self.processed_at[sequences] = at_ns
        self.created_at[sequences] = created_ms

    def record_delivered(self, sequences: np.ndarray, delivery_counts: np.ndarray) -> None:
        """Messages received, with the delivery count the broker gave each (saturating at 255)."""
        self.delivered[sequences] = np.minimum(delivery_counts, SATURATED)

    @staticmethod
    def commit_line(offsets: dict[int, int]) -> str:
        return " ".join(f"{partition} {offset}" for partition, offset in sorted(offsets.items())) + "\n"


def _array(path: Path, count: int, dtype) -> np.ndarray | None:
    """An optional array of the history: None when its file is not there."""
    if not path.is_file():
        return None
    array = np.load(path, allow_pickle=False)
    if array.dtype != dtype or array.shape != (count,):
        raise ValueError(f"{path.name}: {array.dtype}{list(array.shape)}, expected {np.dtype(dtype)}[{count}]")
    return array


def _commit(line: str) -> dict[int, int]:
    words = [int(word) for word in line.split()]
    if len(words) % 2:
        raise ValueError(f"{COMMITS}: {line!r} is not PARTITION OFFSET pairs")
    return dict(zip(words[::2], words[1::2]))


def totals(consumers: list[Processed]) -> np.ndarray:
    """How many times each input message was processed by all the consumers together (uint16: 255 processes of
    255 each fit)."""
    total = np.zeros(len(consumers[0].counts) if consumers else 0, np.uint16)
    for consumer in consumers:
        total += consumer.counts
    return total

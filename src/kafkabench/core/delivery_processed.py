"""What one consumer of a delivery run did: how many times it processed each input message, and what it committed.

The consumer side's twin of `delivery_history`: written by a consumer worker (Python or Java) as it goes, read by
the checker after the run, so it sits below both. In a directory of its own, one per consumer process:

- `processed.npy` (uint8, one per input sequence, mapped): how many times this process processed the message,
  saturating at 255. A count is in the file as soon as it is stored: a consumer killed with SIGKILL keeps all it
  did.
- `processed.meta`: "FORMAT PRODUCER COUNT", the input producer whose ids the values carry and how many it sent.
- `commits.txt`: one line per offset commit the client confirmed, "PARTITION NEXT_OFFSET" per partition, joined by
  spaces, written after the commit returned and before anything else is done: the consumer's own account of
  where a successor starts.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from kafkabench.core.delivery_history import HistoryFileError

FORMAT = 1
COUNTS, META, COMMITS = "processed.npy", "processed.meta", "commits.txt"
SATURATED = 255


class Processed:
    """One consumer process's processed counts, mapped to its files (`create`) or read back (`open`)."""

    def __init__(self, producer: int, counts: np.ndarray, commits: list[dict[int, int]] | None = None) -> None:
        self.producer, self.counts = producer, counts
        self.commits = commits or []  # each commit: partition -> the next offset to read

    @classmethod
    def create(cls, directory: Path, producer: int, count: int) -> Processed:
        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        counts = np.lib.format.open_memmap(directory / COUNTS, mode="w+", dtype=np.uint8, shape=(count,))
        (directory / META).write_text(f"{FORMAT} {producer} {count}\n")
        (directory / COMMITS).write_text("")
        return cls(producer, counts)

    @classmethod
    def open(cls, directory: Path) -> Processed:
        directory = Path(directory)
        try:
            version, producer, count = (int(word) for word in (directory / META).read_text().split())
            counts = np.load(directory / COUNTS, allow_pickle=False)
            if version != FORMAT or counts.dtype != np.uint8 or counts.shape != (count,):
                raise ValueError(f"{COUNTS}: {counts.dtype}{list(counts.shape)}, expected uint8[{count}]")
            commits = [_commit(line) for line in (directory / COMMITS).read_text().splitlines() if line.strip()]
        except (OSError, ValueError) as error:
            raise HistoryFileError(f"{directory}: not a readable consumer history ({error})") from error
        return cls(producer, counts, commits)

    def record(self, sequence: int) -> None:
        """The message processed once more."""
        if (count := self.counts[sequence]) < SATURATED:
            self.counts[sequence] = count + 1

    @staticmethod
    def commit_line(offsets: dict[int, int]) -> str:
        return " ".join(f"{partition} {offset}" for partition, offset in sorted(offsets.items())) + "\n"


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

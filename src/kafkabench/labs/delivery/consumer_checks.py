"""What consumers and copiers did with the input, checked exactly against the input topic as it was read back.

The input is what a fresh read_committed consumer reads of the input topic after the run (`read_input`): the
messages the consumers had to process, each with where it sits. Against it:

- `processed`: the consumers' histories summed (every process, killed ones too): messages processed zero times, once,
  more than once, with the first few examples named (sequence, partition, offset); `promised` says which counts the
  consumer mode promises to be zero. at-most-once (commit-before): none more than once; at-least-once (commit-after):
  none zero times; auto-commit promises neither (when the client commits decides, see docs/labs/delivery.md).
- `copied`: the output topic, read back read_committed, against the input by the exact checker: every input message
  once (lost, duplicated, reordered, strays), and copies of messages that are not in the input.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from kafkabench.core.delivery_history import History
from kafkabench.core.delivery_processed import Processed, totals
from kafkabench.labs.delivery.checker import Checker, ReadChunk, Verdict

EXAMPLES = 3
PROMISES = {"commit-before": ("more_than_once",), "commit-after": ("processed_zero",), "auto-commit": (),
            "copy": ("lost", "duplicated", "reordered", "strays", "copied_from_nowhere")}
PROMISE_WORDS = {"commit-before": "at most once: no message processed twice",
                 "commit-after": "at least once: every message processed",
                 "auto-commit": "none: when the client commits decides",
                 "copy": "exactly once: every input message in the output once"}


@dataclass
class Input:
    """The input topic as read back: per sequence of the input producer, whether it is there, and where."""

    present: np.ndarray  # bool
    partition: np.ndarray  # int32, -1 when absent
    offset: np.ndarray  # int64, -1 when absent
    copies: int = 0  # records of an id already read (the input itself duplicated)
    strays: int = 0  # records that are not the input producer's ids

    @classmethod
    def read(cls, producer: int, count: int, chunks: Iterable[ReadChunk]) -> Input:
        found = cls(np.zeros(count, bool), np.full(count, -1, np.int32), np.full(count, -1, np.int64))
        for chunk in chunks:
            ours = (chunk.producer == producer) & (chunk.sequence >= 0) & (chunk.sequence < count)
            found.strays += chunk.foreign + int(np.count_nonzero(~ours))
            sequence = chunk.sequence[ours]
            again = found.present[sequence]
            found.copies += int(np.count_nonzero(again))
            fresh = sequence[~again]
            found.present[fresh] = True
            found.partition[fresh] = chunk.partition[ours][~again]
            found.offset[fresh] = chunk.offset[ours][~again]
        return found

    def examples(self, which: np.ndarray) -> list[str]:
        return [f"sequence {int(s)} (input partition {int(self.partition[s])}, offset {int(self.offset[s])})"
                for s in np.flatnonzero(which)[:EXAMPLES]]


def copies_text(copies: list[tuple[int, int, int]], origin_epoch_s: float) -> str:
    """`copied to output partition 1 at offsets 871 (8.5 s) and 905 (15.1 s)`: each copy's offset and when it was
    written (its timestamp, the copier's producer's create time) in seconds of the run."""
    if not copies:
        return "no copy found when read again"
    partitions = sorted({partition for partition, _offset, _ms in copies})
    where = f"output partition {partitions[0]}" if len(partitions) == 1 else \
        f"output partitions {', '.join(map(str, partitions))}"
    each = [f"{offset} ({ms / 1000 - origin_epoch_s:.1f} s)" for _partition, offset, ms in copies]
    return f"copied to {where} at offsets {', '.join(each[:-1])} and {each[-1]}" if len(each) > 1 else \
        f"copied to {where} at offset {each[0]}"


def processed(consumers: list[Processed], given: Input) -> tuple[dict, dict]:
    """(counts, examples) of how many times the consumers processed each input message."""
    total = totals(consumers) if consumers else np.zeros(len(given.present), np.uint16)
    present = given.present
    zero, once, more = present & (total == 0), present & (total == 1), present & (total > 1)
    counts = {"input": int(np.count_nonzero(present)), "processed_zero": int(np.count_nonzero(zero)),
              "processed_once": int(np.count_nonzero(once)), "more_than_once": int(np.count_nonzero(more)),
              "processings": int(total.sum(dtype=np.int64)), "input_copies": given.copies, "input_strays": given.strays,
              "processed_not_in_input": int(np.count_nonzero(~present & (total > 0)))}
    examples = {"processed_zero": given.examples(zero), "more_than_once": given.examples(more)}
    return counts, {name: found for name, found in examples.items() if found}


def copier_checker(producer: int, given: Input) -> Checker:
    """The exact checker set up to judge a copier's output: every input message "acknowledged" where the input holds
    it (the output's partition is the input's; no offset, since the copy's offset is the output's own); a message not
    in the input is unknown, so a copy of it is counted apart, not as a stray."""
    count = len(given.present)
    history = History(producer, 0)  # its arrays are views of the input's, read-only: no copy of 10 M messages
    history.status = given.present.view(np.uint8)  # True: 1, ACKNOWLEDGED; False: 0, UNKNOWN
    history.partition = given.partition
    history.offset = np.broadcast_to(np.int64(-1), (count,))
    history.error = np.broadcast_to(np.uint16(0), (count,))
    return Checker([history], idempotent=True)


def copied(verdict: Verdict) -> dict:
    """A copier's counts from the checker's verdict over the output."""
    return {"input": verdict.acknowledged, "copied": verdict.distinct_read - verdict.unknown_found, "lost": verdict.lost,
            "duplicated": verdict.duplicated, "duplicated_ids": verdict.duplicated_ids, "reordered": verdict.reordered,
            "strays": verdict.strays, "foreign": verdict.foreign, "copied_from_nowhere": verdict.unknown_found,
            "output_read": verdict.read}


def failures(mode: str, counts: dict) -> list[str]:
    """The counts the mode promises to be zero that are not."""
    return [name for name in PROMISES[mode] if counts.get(name)]

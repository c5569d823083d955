"""What a transactional run promised, checked exactly (Jepsen's and Apache's definitions, see docs/labs/delivery.md).

Message i of a producer belongs to transaction i // size; the producer's history says whether each transaction was
committed (its messages acknowledged), aborted (on purpose or after an error) or ended unknown. Against what the
read_committed read-back saw (`Checker.seen`) and what a read_uncommitted reader saw:

- aborted_reads: messages of an aborted transaction that read_committed saw. Kafka promises none.
- torn_transactions: committed transactions that read_committed saw in part: some of their messages, not all.
  Kafka promises none (a committed transaction's messages lost whole are counted as lost, not torn).
- aborted_seen_uncommitted: messages of aborted transactions that read_uncommitted saw. Expected: they are written,
  only marked aborted; seeing them is what shows the read-back could see an aborted read if there were one.

Each with the first few examples named: transactional id, transaction, sequence.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from kafkabench.core.delivery_history import ABORTED, ACKNOWLEDGED
from kafkabench.labs.delivery.checker import TALLY_SLICE, Checker, ReadChunk

EXAMPLES = 3


def check(checker: Checker, size: int, transactional_ids: list[str], uncommitted: Iterable[ReadChunk]) -> dict:
    """The counts and examples of a transactional run's checks; `transactional_ids[i]` is history i's producer's."""
    histories = checker.histories
    counts = dict.fromkeys(("committed_transactions", "aborted_transactions", "aborted_reads", "torn_transactions",
                            "aborted_seen_uncommitted"), 0)
    examples: dict[str, list[str]] = {"aborted_reads": [], "torn_transactions": []}
    step = max(size, TALLY_SLICE // size * size)  # whole transactions a slice at a time: a few MB of temporaries
    for index, (history, transactional_id) in enumerate(zip(histories, transactional_ids)):
        seen_all = checker.seen(index)
        for start in range(0, history.sent, step):
            end = min(start + step, history.sent)
            seen, status = seen_all[start:end], history.status[start:end]
            transaction = np.arange(start, end) // size
            first = start // size
            aborted = status == ABORTED
            counts["aborted_transactions"] += len(np.unique(transaction[aborted]))
            read_aborted = np.flatnonzero(aborted & seen) + start
            counts["aborted_reads"] += len(read_aborted)
            examples["aborted_reads"] += [f"{transactional_id} transaction {int(s) // size} sequence {int(s)}"
                                          for s in read_aborted[:EXAMPLES]]
            local = transaction - first
            sizes = np.bincount(local)
            whole = np.flatnonzero(np.bincount(local, weights=status == ACKNOWLEDGED) == sizes)  # committed
            counts["committed_transactions"] += len(whole)
            seen_in = np.bincount(local, weights=seen.astype(np.float64))
            torn = whole[(seen_in[whole] > 0) & (seen_in[whole] < sizes[whole])]
            counts["torn_transactions"] += len(torn)
            examples["torn_transactions"] += [f"{transactional_id} transaction {first + int(t)}: {int(seen_in[t])} of "
                                              f"{int(sizes[t])} messages read" for t in torn[:EXAMPLES]]
    counts["aborted_seen_uncommitted"] = _aborted_seen(checker, uncommitted)
    return {**counts, "examples": {name: found[:EXAMPLES] for name, found in examples.items() if found}}


def _aborted_seen(checker: Checker, chunks: Iterable[ReadChunk]) -> int:
    """Records read (by a read_uncommitted reader) whose message the history says was aborted."""
    return sum(int(np.count_nonzero(checker.statuses(chunk) == ABORTED)) for chunk in chunks)

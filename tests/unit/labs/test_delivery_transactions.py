"""The transactional checks on planted worlds: an aborted read, a torn transaction, a transaction lost whole, and what a
read_uncommitted reader saw, each counted exactly and named by its transactional id."""

import numpy as np
import pytest

from kafkabench.core.delivery_history import History
from kafkabench.labs.delivery.checker import Checker
from kafkabench.labs.delivery.transactions import check
from kafkabench.workers.delivery import aborted

from tests.unit.labs.test_delivery_checker import chunks_of

SIZE = 10  # messages per transaction


def transactional_history(producer: int, transactions: int, aborted_ones: set[int]) -> History:
    """Every transaction's messages acknowledged at offsets in partition 0, those of `aborted_ones` then aborted."""
    history = History(producer, transactions * SIZE)
    sequences = np.arange(transactions * SIZE)
    history.record_acks(sequences, 0, sequences + 1000 * producer)
    for transaction in aborted_ones:
        history.record_aborted(np.arange(transaction * SIZE, (transaction + 1) * SIZE))
    return history


def test_aborted_reads_torn_and_lost_transactions_are_counted_and_named():
    history = transactional_history(0, 6, aborted_ones={1, 4})
    read = [s for s in range(60) if s // SIZE in (0, 2, 5)]  # committed 0, 2, 5 whole
    read += [30, 31, 32]  # committed 3: torn, 3 of 10
    read += [45]  # aborted 4: an aborted read
    # committed 3's other 7 messages are lost; nothing of aborted 1 is read
    checker = Checker([history], idempotent=True)
    for chunk in chunks_of(sorted((0, s, 0, int(history.offset[s])) for s in read), 7):
        checker.feed(chunk)
    uncommitted = [(0, s, 0, int(history.offset[s])) for s in range(60)]
    found = check(checker, SIZE, ["t-0"], chunks_of(uncommitted, 16))
    assert (found["committed_transactions"], found["aborted_transactions"]) == (4, 2)
    assert (found["aborted_reads"], found["torn_transactions"], found["aborted_seen_uncommitted"]) == (1, 1, 20)
    assert found["examples"] == {"aborted_reads": ["t-0 transaction 4 sequence 45"],
                                 "torn_transactions": ["t-0 transaction 3: 3 of 10 messages read"]}
    assert checker.result().lost == 7  # the torn transaction's unread messages are lost too


def test_a_clean_transactional_run_has_nothing_to_say_and_a_found_miss_is_not_torn():
    histories = [transactional_history(p, 3, aborted_ones={2}) for p in (0, 1)]
    records = [(h.producer, s, 0, int(h.offset[s])) for h in histories for s in range(20)]  # committed 0 and 1
    missed = records.pop(3)  # the first read misses one; the second finds it
    checker = Checker(histories, idempotent=True)
    for chunk in chunks_of(sorted(records, key=lambda r: r[3]), 5):
        checker.feed(chunk)
    checker.confirm(chunks_of([missed], 5))
    found = check(checker, SIZE, ["t-0", "t-1"], chunks_of([], 5))
    assert (found["aborted_reads"], found["torn_transactions"], found["aborted_seen_uncommitted"]) == (0, 0, 0)
    assert found["examples"] == {} and found["committed_transactions"] == 4


@pytest.mark.parametrize("ratio, expected", [(0.0, []), (0.3, [3, 6, 9]), (0.5, [1, 3, 5, 7, 9]), (0.25, [3, 7])])
def test_aborted_on_purpose_is_the_ratio_spread_evenly(ratio, expected):
    assert [t for t in range(10) if aborted(t, ratio)] == expected

from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from kafkabench.labs.delivery.checker import Checker, ReadBackError, ReadChunk, Verdict, check
from kafkabench.labs.delivery.verdicts import verdict_line, verdict_lines
from kafkabench.core.delivery_history import ACKNOWLEDGED, FAILED, UNKNOWN, History

PRODUCERS, PARTITIONS, PER_PRODUCER = 3, 4, 120


def chunks_of(records, size, foreign=0):
    """Records (producer, sequence, partition, offset) in read order, as ReadChunks of `size`; the foreign
    count rides on the first chunk."""
    records = list(records)
    for start in range(0, max(len(records), 1), size):
        part = records[start:start + size]
        columns = list(zip(*part)) or [(), (), (), ()]
        yield ReadChunk(np.array(columns[0], np.uint16), np.array(columns[1], np.uint32),
                        np.array(columns[2], np.int32), np.array(columns[3], np.int64),
                        foreign if start == 0 else 0)


def read_order(logs, block=7):
    """A consumer's read order: `block` records from each partition in turn, offset order within each."""
    cursors = {partition: 0 for partition in logs}
    while any(cursors[p] < len(logs[p]) for p in logs):
        for partition, log in logs.items():
            for producer, sequence, offset in log[cursors[partition]:cursors[partition] + block]:
                yield producer, sequence, partition, offset
            cursors[partition] += block


def run_checker(histories, records, size, idempotent=True, foreign=0) -> Verdict:
    checker = Checker(histories, idempotent)
    for chunk in chunks_of(records, size, foreign):
        checker.feed(chunk)
    return checker.result()


class World:
    """Producers sending round-robin over partitions (sequence s of producer p to (s + p) % 4); plants edit the
    logs, then `seal` gives offsets and acknowledges every id at its first copy unless a plant said otherwise."""

    def __init__(self):
        self.logs = {q: [] for q in range(PARTITIONS)}
        for sequence in range(PER_PRODUCER):
            for producer in range(PRODUCERS):
                self.logs[(sequence + producer) % PARTITIONS].append([producer, sequence])
        self.histories = [History(p, PER_PRODUCER) for p in range(PRODUCERS)]
        self.outcome = {}  # (producer, sequence) -> "failed" | "unknown" | "no offset" | "last copy" | (q, o) -> (q, o)
        self.removed = set()

    def where(self, producer, sequence):
        q = (sequence + producer) % PARTITIONS
        return q, self.logs[q].index([producer, sequence])

    def copy_after(self, producer, sequence, after_sequence):
        q, after = self.where(producer, after_sequence)
        assert q == (sequence + producer) % PARTITIONS
        self.logs[q].insert(after + 1, [producer, sequence])

    def move_after(self, producer, sequence, after_sequence):
        q, at = self.where(producer, sequence)
        self.logs[q].pop(at)
        self.copy_after(producer, sequence, after_sequence)

    def move_before(self, producer, sequence, before_sequence):
        q, at = self.where(producer, sequence)
        self.logs[q].pop(at)
        q, before = self.where(producer, before_sequence)
        self.logs[q].insert(before, [producer, sequence])

    def remove(self, producer, sequence):
        self.removed.add((producer, sequence))

    def seal(self):
        sealed, acked_at, last_copy = {}, {}, {}
        for q, log in self.logs.items():
            sealed[q] = []
            for offset, (producer, sequence) in enumerate(log):
                acked_at.setdefault((producer, sequence), (q, offset))
                last_copy[producer, sequence] = (q, offset)
                if (producer, sequence) not in self.removed:
                    sealed[q].append((producer, sequence, offset))
        for (producer, sequence), (q, offset) in acked_at.items():
            history, outcome = self.histories[producer], self.outcome.get((producer, sequence))
            if outcome == "failed":
                history.record_failure(sequence, "NOT_ENOUGH_REPLICAS")
            elif outcome == "no offset":
                history.record_ack(sequence, q, -1)
            elif outcome == "last copy":
                history.record_ack(sequence, *last_copy[producer, sequence])
            elif callable(outcome):
                history.record_ack(sequence, *outcome(q, offset))
            elif outcome != "unknown":
                history.record_ack(sequence, q, offset)
        return sealed


def planted_world():
    world = World()
    for lost in [(0, 10), (0, 50), (0, 51), (2, 7)]:
        world.remove(*lost)
    world.outcome.update({(1, 3): "failed", (1, 4): "failed", (1, 90): "failed"})
    world.remove(1, 90)
    world.outcome.update({(2, s): "unknown" for s in (20, 21, 22, 100, 101)})
    world.remove(2, 100), world.remove(2, 101)
    world.copy_after(0, 30, 118)  # a copy at the end of its partition
    world.copy_after(1, 60, 68)  # two copies among later sequences: duplicates, not reorders
    world.copy_after(1, 60, 112)
    world.copy_after(0, 40, 44)
    world.outcome[(0, 40)] = "last copy"  # acknowledged at its second copy: no mismatch
    world.move_after(2, 80, 92)  # read 84 88 92 80: one reorder
    world.move_before(1, 41, 33)  # read 29 41 33 37: two reorders
    world.outcome[(0, 70)] = lambda q, o: (q, o + 10_000)
    world.outcome[(1, 71)] = lambda q, o: ((q + 1) % PARTITIONS, o)
    world.outcome[(2, 110)] = "no offset"  # acks=0: no position to mismatch
    world.outcome[(2, 111)] = "no offset"
    world.remove(2, 111)
    logs = world.seal()
    logs[1].append((7, 0, logs[1][-1][2] + 1))  # strays: a producer without history, a sequence never sent
    logs[3].append((1, 500, logs[3][-1][2] + 1))
    return world.histories, list(read_order(logs))


PLANTED = dict(sent=360, acknowledged=352, failed=3, unknown=5, read=358, foreign=3, strays=2, distinct_read=352,
               lost=5, unconfirmed_misses=0, loss_confirmed=False, duplicated=4, duplicated_ids=3, reordered=3,
               delivered_despite_error=2, unknown_found=3, unknown_not_found=2, offset_mismatch=2)


@pytest.mark.parametrize("size", [1, 2, 3, 5, 64, 10_000])
def test_every_planted_anomaly_is_counted_exactly_whatever_the_chunk_size(size):
    histories, records = planted_world()
    verdict = run_checker(histories, records, size, foreign=3)
    assert {name: getattr(verdict, name) for name in PLANTED} == PLANTED
    assert verdict.delivered_pct == pytest.approx(100 * 352 / 360)
    assert verdict.failures == ["lost", "duplicated", "reordered", "offset_mismatch", "strays"]
    checker = Checker(histories, idempotent=True)
    for chunk in chunks_of(records, size, 3):
        checker.feed(chunk)
    assert sorted(checker.reorder_examples) == [(1, 2, 33, 41), (1, 2, 37, 41), (2, 2, 80, 92)]  # partition (s + p) % 4
    assert run_checker(histories, records, size, idempotent=False).failures == ["lost", "offset_mismatch", "strays"]


def test_missing_lists_the_acknowledged_ids_not_read_with_their_acknowledged_place():
    histories, records = planted_world()
    checker = Checker(histories, idempotent=True)
    for chunk in chunks_of(records, 50):
        checker.feed(chunk)
    missing = checker.missing()
    assert list(zip(missing.producer.tolist(), missing.sequence.tolist())) == [(0, 10), (0, 50), (0, 51), (2, 7),
                                                                                (2, 111)]
    assert missing.offset[-1] == -1 and missing.count == 5
    assert missing.partition.tolist() == [h.partition[s] for h, s in [(histories[0], 10), (histories[0], 50),
                                                                       (histories[0], 51), (histories[2], 7),
                                                                       (histories[2], 111)]]


def test_a_reorder_across_a_chunk_boundary_and_a_duplicate_before_it():
    history = History(0, 10)
    history.record_acks(np.arange(10), 0, np.arange(10))
    read = [(0, 5, 0, 0), (0, 6, 0, 1), (0, 5, 0, 2), (0, 4, 0, 3), (0, 3, 1, 4), (0, 7, 0, 5)]
    for size in (1, 2, 3, 4):
        verdict = run_checker([history], read, size)
        assert (verdict.reordered, verdict.duplicated, verdict.duplicated_ids) == (1, 1, 1)  # 4 after 6; 3 elsewhere
        checker = Checker([history], idempotent=True)
        for chunk in chunks_of(read, size):
            checker.feed(chunk)
        assert checker.reorder_examples == [(0, 0, 4, 6)]  # producer 0, partition 0: 4 read after 6


def test_the_first_copy_in_read_order_is_the_read_that_counts_even_inside_one_chunk():
    history = History(0, 5)
    history.record_acks(np.array([3, 4]), np.array([1, 0]), np.array([0, 0]))
    # 3 is read first in partition 1; its copy in partition 0, after 4, is a duplicate there, not a reorder
    read = [(0, 3, 1, 0), (0, 4, 0, 0), (0, 3, 0, 1)]
    for size in (1, 3):
        verdict = run_checker([history], read, size)
        assert (verdict.reordered, verdict.duplicated, verdict.offset_mismatch, verdict.lost) == (0, 1, 0, 0)


def reference(histories, records):
    """The definitions, one record at a time."""
    by_producer = {h.producer: h for h in histories}
    seen, high, at_ack = Counter(), {}, set()
    strays = reordered = 0
    for producer, sequence, partition, offset in records:
        history = by_producer.get(producer)
        if history is None or sequence >= history.sent:
            strays += 1
            continue
        if not seen[producer, sequence] and sequence < high.get((producer, partition), -1):
            reordered += 1
        high[producer, partition] = max(high.get((producer, partition), -1), sequence)
        seen[producer, sequence] += 1
        if (history.partition[sequence], history.offset[sequence]) == (partition, offset):
            at_ack.add((producer, sequence))
    counts = Counter(strays=strays, reordered=reordered, read=len(records),
                     duplicated=sum(seen.values()) - len(seen), duplicated_ids=sum(n > 1 for n in seen.values()))
    for h in histories:
        for sequence, status in enumerate(h.status.tolist()):
            read = seen[h.producer, sequence] > 0
            counts["sent"] += 1
            counts["distinct_read"] += read
            counts["acknowledged"] += status == ACKNOWLEDGED
            counts["lost"] += status == ACKNOWLEDGED and not read
            counts["failed"] += status == FAILED
            counts["delivered_despite_error"] += status == FAILED and read
            counts["unknown_found"] += status == UNKNOWN and read
            counts["unknown_not_found"] += status == UNKNOWN and not read
            counts["offset_mismatch"] += (status == ACKNOWLEDGED and read and h.offset[sequence] >= 0
                                          and (h.producer, sequence) not in at_ack)
    return counts


@st.composite
def messy_worlds(draw):
    """Random histories and a random read-back with every anomaly: local swaps (reorders), copies (also into
    other partitions), acknowledgements at the wrong place or without an offset, strays, dropped records
    (losses); offsets increase within each partition."""
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    producers = draw(st.lists(st.integers(0, 65_535), min_size=1, max_size=4, unique=True))
    partitions = draw(st.integers(1, 4))
    histories = {p: History(p, draw(st.integers(0, 40))) for p in producers}
    logs = {q: [] for q in range(partitions)}
    for h in histories.values():
        for sequence in range(h.sent):
            logs[int(rng.integers(partitions))].append((h.producer, sequence))
    for log in logs.values():
        for _ in range(int(rng.integers(0, 4)) if len(log) > 1 else 0):
            i = int(rng.integers(len(log) - 1))
            log[i], log[i + 1] = log[i + 1], log[i]
    for _ in range(int(rng.integers(0, 6))):
        source = [r for log in logs.values() for r in log]
        if source:
            target = logs[int(rng.integers(partitions))]
            target.insert(int(rng.integers(len(target) + 1)), source[int(rng.integers(len(source)))])
    logs[0].insert(int(rng.integers(len(logs[0]) + 1)), (producers[0], 10_000))
    placed = {q: [(p, s, o) for (p, s), o in zip(log, np.cumsum(rng.integers(1, 3, len(log))).tolist())]
              for q, log in logs.items()}
    for q, log in placed.items():
        for producer, sequence, offset in log:
            h = histories[producer]
            if sequence < h.sent and h.status[sequence] == UNKNOWN and rng.random() < 0.8:
                h.record_ack(sequence, q, offset if rng.random() < 0.9 else offset + 1)
    for h in histories.values():
        pending = np.flatnonzero(h.status == UNKNOWN)
        h.record_failures(pending[rng.random(len(pending)) < 0.5], "REQUEST_TIMED_OUT")
        acked = np.flatnonzero(h.status == ACKNOWLEDGED)
        h.offset[acked[rng.random(len(acked)) < 0.1]] = -1  # acks=0
    records = list(read_order(placed, block=int(rng.integers(1, 5))))
    return list(histories.values()), [r for r in records if rng.random() > 0.1]


@settings(max_examples=150, deadline=None)
@given(messy_worlds(), st.integers(1, 12))
def test_the_checker_agrees_with_the_definitions_record_by_record(world, size):
    histories, records = world
    verdict = run_checker(histories, records, size)
    expected = reference(histories, records)
    assert {name: getattr(verdict, name) for name in expected} == dict(expected)


@st.composite
def clean_worlds(draw):
    """Histories whose acknowledged messages are in the log in order, producers interleaved at random."""
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    partitions = draw(st.integers(1, 5))
    histories = [History(p, draw(st.integers(0, 60))) for p in range(draw(st.integers(1, 4)))]
    logs = {q: [] for q in range(partitions)}
    for h in histories:
        status = rng.choice([UNKNOWN, ACKNOWLEDGED, ACKNOWLEDGED, ACKNOWLEDGED, FAILED], h.sent)
        h.record_failures(np.flatnonzero(status == FAILED), "NOT_LEADER_OR_FOLLOWER")
        for sequence in np.flatnonzero(status == ACKNOWLEDGED).tolist():
            logs[int(rng.integers(partitions))].append((h.producer, sequence))
    records = []
    for q, log in logs.items():
        by_producer = [[r for r in log if r[0] == h.producer] for h in histories]
        turns = rng.permutation(np.repeat(np.arange(len(histories)), [len(b) for b in by_producer]))
        for offset, producer in enumerate(turns.tolist()):
            _, sequence = by_producer[producer].pop(0)
            histories[producer].record_ack(sequence, q, offset)
            records.append((producer, sequence, q, offset))
    return histories, records


@settings(max_examples=100, deadline=None)
@given(clean_worlds(), st.integers(1, 20))
def test_reading_back_exactly_the_acknowledged_set_finds_nothing_wrong(world, size):
    histories, records = world
    verdict = run_checker(histories, sorted(records, key=lambda r: (r[2], r[3])), size)
    acknowledged = sum(h.acked for h in histories)
    assert (verdict.acknowledged, verdict.read, verdict.distinct_read) == (acknowledged, acknowledged, acknowledged)
    assert (verdict.lost, verdict.duplicated, verdict.duplicated_ids, verdict.reordered, verdict.offset_mismatch,
            verdict.delivered_despite_error, verdict.unknown_found, verdict.strays) == (0,) * 8
    assert verdict.failures == [] and verdict.unknown_not_found == sum(h.unknown for h in histories)


@settings(max_examples=100, deadline=None)
@given(clean_worlds(), st.data())
def test_removing_k_acknowledged_ids_loses_exactly_k(world, data):
    histories, records = world
    gone = data.draw(st.sets(st.sampled_from(range(len(records))) if records else st.nothing()))
    kept = [r for i, r in enumerate(records) if i not in gone]
    checker = Checker(histories, idempotent=True)
    for chunk in chunks_of(kept, data.draw(st.integers(1, 9))):
        checker.feed(chunk)
    assert checker.result().lost == len(gone)
    missing = checker.missing()
    assert set(zip(missing.producer.tolist(), missing.sequence.tolist())) == {records[i][:2] for i in gone}


@settings(max_examples=100, deadline=None)
@given(messy_worlds(), st.integers(1, 12), st.integers(0, 2**32 - 1))
def test_which_producer_sits_at_which_offset_of_a_partition_does_not_change_lost_or_duplicated(world, size, seed):
    histories, records = world
    rng = np.random.default_rng(seed)
    shuffled = list(records)
    for partition in {r[2] for r in records}:
        at = [i for i, r in enumerate(records) if r[2] == partition]
        ids = [records[i][:2] for i in at]
        for i, j in zip(at, rng.permutation(len(at)).tolist()):
            shuffled[i] = ids[j] + records[i][2:]
    before, after = run_checker(histories, records, size), run_checker(histories, shuffled, size)
    assert (after.lost, after.duplicated, after.duplicated_ids) == (before.lost, before.duplicated,
                                                                    before.duplicated_ids)


def test_a_miss_the_second_read_finds_is_not_a_loss():
    histories, records = planted_world()
    first = [r for r in records if r[:2] != (0, 30)]  # the first read misses both copies of (0, 30)
    checker = Checker(histories, idempotent=True)
    for chunk in chunks_of(first, 40):
        checker.feed(chunk)
    assert checker.missing().count == 6
    second = [r for r in records if r[2] in {int(q) for q in checker.missing().partition}]
    checker.confirm(chunks_of(second, 40))
    verdict = checker.result()
    assert (verdict.lost, verdict.unconfirmed_misses, verdict.loss_confirmed) == (5, 1, True)
    assert (0, 30) not in set(zip(checker.missing().producer.tolist(), checker.missing().sequence.tolist()))
    assert checker.missing().count == 5
    assert verdict.delivered_pct == pytest.approx(100 * 352 / 360)
    with pytest.raises(ValueError, match="feed after confirm"):
        checker.feed(next(chunks_of(first, 40)))


def test_check_asks_for_a_second_read_of_what_is_missing_only():
    histories, records = planted_world()
    asked = []

    def second_read(missing):
        asked.append(missing.spans())
        return chunks_of([(0, 10, int(missing.partition[0]), 99_999)], 1)

    verdict = check(histories, chunks_of(records, 100), idempotent=False, second_read=second_read)
    assert (verdict.lost, verdict.unconfirmed_misses) == (4, 1)
    assert len(asked) == 1 and [q for q, _, _ in asked[0]] == sorted({int(h.partition[s]) for h, s in [
        (histories[0], 10), (histories[0], 50), (histories[0], 51), (histories[2], 7), (histories[2], 111)]})
    clean = History(0, 2)
    clean.record_acks(np.arange(2), 0, np.arange(2))
    assert check([clean], chunks_of([(0, 0, 0, 0), (0, 1, 0, 1)], 5), True, second_read=lambda m: 1 / 0).lost == 0


def test_spans_cover_the_missing_offsets_per_partition():
    history = History(3, 6)
    history.record_acks(np.arange(5), np.array([2, 0, 2, 2, 0]), np.array([40, 7, 12, 30, 9]))
    history.record_ack(5, 1, -1)
    checker = Checker([history], idempotent=True)
    checker.feed(next(chunks_of([(3, 3, 2, 30)], 1)))
    assert checker.missing().spans() == [(0, 7, 9), (1, 0, None), (2, 12, 40)]


def test_an_offset_read_twice_or_backwards_is_refused():
    history = History(0, 4)
    history.record_acks(np.arange(4), 0, np.arange(4))
    with pytest.raises(ReadBackError, match="partition 0: offset 1 read after offset 1"):
        run_checker([history], [(0, 0, 0, 0), (0, 1, 0, 1), (0, 1, 0, 1)], 10)
    with pytest.raises(ReadBackError, match="partition 0: offset 0 read after offset 1"):
        run_checker([history], [(0, 0, 0, 0), (0, 1, 0, 1), (0, 0, 0, 0)], 2)
    assert run_checker([history], [(0, 0, 0, 0), (0, 1, 1, 0)], 1).read == 2  # offsets are per partition


def test_two_histories_for_one_producer_are_refused():
    with pytest.raises(ValueError, match="two histories for one producer"):
        Checker([History(4, 1), History(4, 2)], idempotent=True)


def verdict(**counts):
    fields = dict(idempotent=True, sent=0, acknowledged=0, failed=0, unknown=0, read=0, foreign=0, strays=0,
                  distinct_read=0, lost=0, unconfirmed_misses=0, loss_confirmed=True, duplicated=0,
                  duplicated_ids=0, reordered=0, delivered_despite_error=0, unknown_found=0, unknown_not_found=0,
                  offset_mismatch=0)
    return Verdict(**(fields | counts))


SETTINGS = "acks=1, RF 3, min.insync 1, leader killed 3x"


def test_the_loss_line():
    assert verdict_line(verdict(sent=1_003_500, acknowledged=1_003_333, lost=1_204), SETTINGS) == (
        "acks=1, RF 3, min.insync 1, leader killed 3x: 1,204 acknowledged messages lost (0.12 %)")
    assert verdict_line(verdict(sent=10, acknowledged=10, lost=1), "acks=0") == (
        "acks=0: 1 acknowledged message lost (10.00 %)")
    assert verdict_line(verdict(sent=10**7, acknowledged=10**7, lost=3)) == (
        "3 acknowledged messages lost (< 0.01 %)")
    assert verdict_line(verdict(sent=10**6, acknowledged=10**6, lost=10**6 - 1)).endswith("(> 99.99 %)")
    assert verdict_line(verdict(sent=5, acknowledged=5, lost=5, loss_confirmed=False)) == (
        "5 acknowledged messages lost (100 %), not confirmed by a second read")
    assert verdict_line(verdict(sent=9, acknowledged=8, unconfirmed_misses=2), "acks=all") == (
        "acks=all: 0 lost: all 8 acknowledged messages read back (2 only by the second read)")
    assert verdict_line(verdict(sent=9, acknowledged=8)) == "0 lost: all 8 acknowledged messages read back"
    assert verdict_line(verdict(sent=9, failed=9)) == "no message acknowledged (9 sent): nothing to lose"


def test_duplicates_and_reorders_have_a_line_only_where_they_are_failures():
    counts = dict(sent=100, acknowledged=100, duplicated=5, duplicated_ids=4, reordered=1, delivered_despite_error=2)
    assert verdict_lines(verdict(**counts), "idempotent") == [
        "idempotent: 0 lost: all 100 acknowledged messages read back",
        "idempotent: 5 duplicate copies of 4 messages despite idempotence",
        "idempotent: 1 message read out of order despite idempotence",
        "idempotent: 2 sends reported failed delivered anyway (not a failure: a client that gives up cannot know "
        "what the broker wrote)"]
    plain = verdict_lines(verdict(idempotent=False, offset_mismatch=1, strays=3, **counts), "acks=1")
    assert plain[1:3] == ["acks=1: 1 acknowledged message read back, but never at the offset acknowledged",
                          "acks=1: 3 records with an id no producer's history sent: the histories do not describe "
                          "this topic"]
    assert len(plain) == 4 and not any("duplicate" in line or "out of order" in line for line in plain)


def test_to_dict_carries_the_derived_figures():
    data = verdict(sent=200, acknowledged=100, distinct_read=150, unconfirmed_misses=10, lost=5).to_dict()
    assert (data["delivered_pct"], data["lost_pct"], data["failures"], data["lost"]) == (80.0, 5.0, ["lost"], 5)
    assert (verdict().delivered_pct, verdict().lost_pct) == (None, None)

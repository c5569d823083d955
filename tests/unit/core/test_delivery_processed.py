"""A consumer's processed counts and commit log: mapped as they are written, read back whole, summed across processes."""

import numpy as np
import pytest

from kafkabench.core.delivery_history import HistoryFileError
from kafkabench.core.delivery_processed import COMMITS, COUNTS, CREATED_AT, PROCESSED_AT, Processed, totals


def test_counts_and_commits_are_in_the_files_as_they_are_written(tmp_path):
    written = Processed.create(tmp_path / "c", producer=3, count=5)
    written.record(1, 1_000, 7)
    written.record(1, 2_000, 7)
    written.record(4, 3_000, 9)
    (tmp_path / "c" / COMMITS).write_text(Processed.commit_line({2: 7, 0: 12}))
    # read without the writer closing anything: what a killed process leaves
    read = Processed.open(tmp_path / "c")
    assert read.producer == 3
    assert read.counts.tolist() == [0, 2, 0, 0, 1]
    assert read.commits == [{0: 12, 2: 7}]
    # when each was last processed (wall-clock ns) and its record's own timestamp (ms); 0: never processed
    assert read.processed_at.tolist() == [0, 2_000, 0, 0, 3_000] and read.created_at.tolist() == [0, 7, 0, 0, 9]
    assert Processed.commit_line({2: 7, 0: 12}) == "0 12 2 7\n"


def test_a_count_saturates_instead_of_wrapping(tmp_path):
    processed = Processed.create(tmp_path, producer=0, count=1)
    for _ in range(300):
        processed.record(0, 1, 1)
    assert int(processed.counts[0]) == 255


def test_a_history_written_before_the_times_were_kept_opens_without_them(tmp_path):
    Processed.create(tmp_path, producer=0, count=2).record(1, 5, 5)
    (tmp_path / PROCESSED_AT).unlink()
    (tmp_path / CREATED_AT).unlink()
    read = Processed.open(tmp_path)
    assert read.counts.tolist() == [0, 1] and read.processed_at is None and read.created_at is None


def test_totals_add_every_process_without_overflow(tmp_path):
    first, second = (Processed(0, np.array(counts, np.uint8)) for counts in ([255, 1, 0], [255, 0, 0]))
    assert totals([first, second]).tolist() == [510, 1, 0]


@pytest.mark.parametrize("damage", ["meta", "commits", "counts"])
def test_a_damaged_history_is_refused_in_one_line(tmp_path, damage):
    Processed.create(tmp_path, producer=0, count=4)
    if damage == "meta":
        (tmp_path / "processed.meta").write_text("1 0 5\n")
    elif damage == "commits":
        (tmp_path / COMMITS).write_text("0 12 3\n")
    else:
        np.save(tmp_path / COUNTS, np.zeros(4, np.int64))
    with pytest.raises(HistoryFileError) as refused:
        Processed.open(tmp_path)
    assert "not a readable consumer history" in str(refused.value) and "\n" not in str(refused.value)


def test_a_batch_recorded_at_once_leaves_what_recording_each_would(tmp_path):
    one_by_one, batch = (Processed.create(tmp_path / name, producer=0, count=4) for name in ("a", "b"))
    for _ in range(254):
        one_by_one.record(3, 1, 1)
    batch.counts[3] = 254
    sequences = np.array([1, 3, 1, 3, 0])  # twice in one batch counts twice; 3 saturates at 255
    for sequence in sequences:
        one_by_one.record(int(sequence), 50, 9)
    batch.record_many(sequences, 50, np.full(5, 9))
    assert batch.counts.tolist() == one_by_one.counts.tolist() == [1, 2, 0, 255]
    assert batch.processed_at.tolist() == [50, 50, 0, 50] and batch.created_at.tolist() == [9, 9, 0, 9]


def test_a_share_members_delivery_counts_are_mapped_and_absent_for_the_others(tmp_path):
    member = Processed.create(tmp_path / "share", 0, 4, delivered=True)
    member.record_delivered(np.array([1, 3]), np.array([2, 300]))
    assert Processed.open(tmp_path / "share").delivered.tolist() == [0, 2, 0, 255]  # saturating, as the counts do
    Processed.create(tmp_path / "consumer", 0, 4)
    assert Processed.open(tmp_path / "consumer").delivered is None

import numpy as np
import pytest

from kafkabench.core.delivery_history import ACKNOWLEDGED, FAILED, UNKNOWN, History, HistoryFileError


def recorded() -> History:
    history = History(producer=65_535, sent=10)
    history.record_acks(np.array([0, 1, 2, 5]), np.array([3, 3, 1, 0]), np.array([100, 101, 7, 2**40]))
    history.record_failures(np.array([3, 4]), "NOT_ENOUGH_REPLICAS")
    history.record_ack(6, 2, -1)  # acks=0: acknowledged without an offset
    history.record_failure(7, "REQUEST_TIMED_OUT")
    history.record_failures(np.array([8]), np.array([history.error_code("NOT_ENOUGH_REPLICAS")], np.uint16))
    return history


def test_outcomes_in_bulk_and_one_at_a_time():
    history = recorded()
    assert (history.sent, history.acked, history.failed, history.unknown) == (10, 5, 4, 1)
    assert history.status.tolist() == [1, 1, 1, 2, 2, 1, 1, 2, 2, 0]
    assert history.partition.tolist() == [3, 3, 1, -1, -1, 0, 2, -1, -1, -1]
    assert history.offset.tolist() == [100, 101, 7, -1, -1, 2**40, -1, -1, -1, -1]
    assert history.error_names == ["", "NOT_ENOUGH_REPLICAS", "REQUEST_TIMED_OUT"]
    assert history.error_counts() == {"NOT_ENOUGH_REPLICAS": 3, "REQUEST_TIMED_OUT": 1}


def test_a_later_outcome_replaces_an_earlier_one():
    history = History(0, 2)
    history.record_failure(0, "TIMEOUT")
    history.record_ack(0, 4, 9)
    history.record_acks(np.array([1]), 4, np.array([10]))
    history.record_failures(np.array([1]), "LATE")
    assert history.status.tolist() == [ACKNOWLEDGED, FAILED] and history.error.tolist() == [0, 2]
    assert (history.partition.tolist(), history.offset.tolist()) == ([4, -1], [9, -1])


@pytest.mark.parametrize("compress", [True, False])
def test_save_and_load_give_back_the_same_history(tmp_path, compress):
    history = recorded()
    history.save(tmp_path / "p.npz", compress=compress)
    loaded = History.load(tmp_path / "p.npz")
    assert loaded.producer == 65_535 and loaded.error_names == history.error_names
    for name, dtype in [("status", np.uint8), ("partition", np.int32), ("offset", np.int64), ("error", np.uint16)]:
        assert getattr(loaded, name).dtype == dtype
        assert getattr(loaded, name).tolist() == getattr(history, name).tolist()
    assert loaded.error_code("REQUEST_TIMED_OUT") == 2 and loaded.error_code("NEW") == 3


def test_an_empty_history_round_trips(tmp_path):
    History(3, 0).save(tmp_path / "empty.npz")
    loaded = History.load(tmp_path / "empty.npz")
    assert (loaded.producer, loaded.sent, loaded.error_names) == (3, 0, [""])


def test_a_file_that_is_not_a_history_says_which_file(tmp_path):
    (tmp_path / "junk.npz").write_bytes(b"not a zip")
    with pytest.raises(HistoryFileError, match="junk.npz: not a readable delivery history"):
        History.load(tmp_path / "junk.npz")
    np.savez(tmp_path / "other.npz", status=np.zeros(3, np.uint8))
    with pytest.raises(HistoryFileError, match="other.npz"):
        History.load(tmp_path / "other.npz")
    history = recorded()
    arrays = {name: getattr(history, name) for name in ("status", "partition", "error")}
    np.savez(tmp_path / "bad.npz", format=1, producer=1, error_names=np.array([""]), offset=np.zeros(10, np.int32),
             **arrays)
    with pytest.raises(HistoryFileError, match=r"offset: int32\[10\], expected int64\[10\]"):
        History.load(tmp_path / "bad.npz")
    with pytest.raises(HistoryFileError, match="missing.npz"):
        History.load(tmp_path / "missing.npz")


def test_fifteen_bytes_a_message(tmp_path):
    history = History(0, 1_000_000)
    assert history.nbytes / history.sent == 15
    history.record_acks(np.arange(1_000_000), np.arange(1_000_000) % 6, np.arange(1_000_000) // 6 + 1_000)
    history.save(tmp_path / "p.npz")
    assert (tmp_path / "p.npz").stat().st_size / history.sent < 3  # offsets climb by small steps


def test_impossible_inputs_are_refused():
    with pytest.raises(ValueError, match="producer 65536: must be 0..65535"):
        History(65_536, 1)
    with pytest.raises(ValueError, match="index 0 means no error"):
        History(0, 1, ["TIMEOUT"])
    history = History(0, 3)
    with pytest.raises(ValueError, match="3 sequences but 2 offsets"):
        history.record_acks(np.arange(3), 0, np.arange(2))
    with pytest.raises(ValueError, match="a partition >= 0 and an offset >= 0"):
        history.record_acks(np.arange(3), 0, np.array([0, -2, 1]))
    assert history.status.tolist() == [UNKNOWN] * 3


def test_a_mapped_history_keeps_what_a_worker_was_told_when_it_exits_at_once(tmp_path):
    import subprocess
    import sys
    import textwrap

    writer = textwrap.dedent(f"""
        import os
        from kafkabench.core.delivery_history import History
        history = History.mapped({str(tmp_path / "p7")!r}, producer=7, sent=1000)
        for sequence in range(10):
            history.record_ack(sequence, sequence % 3, 100 + sequence)
        history.record_failure(10, "NOT_ENOUGH_REPLICAS")
        history.record_failure(11, "_MSG_TIMED_OUT")
        os._exit(3)  # no close, no flush, no save: what async-exit does
    """)
    done = subprocess.run([sys.executable, "-c", writer], capture_output=True, text=True, timeout=60)
    assert done.returncode == 3, done.stderr
    history = History.open_mapped(tmp_path / "p7")
    assert (history.producer, history.sent, history.acked, history.failed, history.unknown) == (7, 1000, 10, 2, 988)
    assert history.partition[:10].tolist() == [s % 3 for s in range(10)] and history.offset[9] == 109
    assert history.partition[500] == -1 and history.offset[500] == -1
    assert history.error_counts() == {"NOT_ENOUGH_REPLICAS": 1, "_MSG_TIMED_OUT": 1}


def test_a_damaged_mapped_history_is_refused_in_one_line(tmp_path):
    History.mapped(tmp_path / "p1", producer=1, sent=5)
    (tmp_path / "p1" / "offset.npy").write_bytes(b"not numpy")
    with pytest.raises(HistoryFileError, match="not a readable mapped delivery history"):
        History.open_mapped(tmp_path / "p1")


def test_a_mapped_history_ended_early_counts_only_what_was_sent(tmp_path):
    history = History.mapped(tmp_path / "p2", producer=2, sent=1000)
    history.record_acks(np.arange(40), 0, np.arange(40))
    history.end_at(50)  # told to finish: 50 handed to the client, 40 of them answered
    assert (history.sent, history.acked, history.unknown) == (50, 40, 10)
    read = History.open_mapped(tmp_path / "p2")
    assert (read.producer, read.sent, read.acked, read.unknown) == (2, 50, 40, 10)
    assert read.offset[:40].tolist() == list(range(40))
    with pytest.raises(ValueError, match="the history holds 50"):
        history.end_at(51)

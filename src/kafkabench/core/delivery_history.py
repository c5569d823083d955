"""What one producer knows of its own sends: one outcome per message, in arrays indexed by sequence.

Every message of a delivery run carries a unique id (producer, sequence): `producer` a small int
(0..65535), `sequence` 0..n-1 per producer. A producer keeps one `History`, sized to the messages it sent:

- `status` (uint8): 0 **unknown** (no answer before the process ended or the send timed out: the message
  may or may not have been written, so an unknown is never counted as lost), 1 **acknowledged** (for a
  transactional producer: its transaction committed), 2 **failed**, 3 **aborted** (its transaction aborted, on
  purpose or after an error: a read_committed reader must never see it);
- `partition` (int32), `offset` (int64): where the acknowledgement said the message was written, -1 unless
  acknowledged. An acknowledgement may come without an offset (acks=0: the broker never answers, the client
  reports offset -1); such a message can be lost but has no position to mismatch;
- `error` (uint16): the error a send was reported with, an index into `error_names` (0 = none).

Arrays rather than an object per message because a run sends millions: 15 bytes a message in memory
(10 million: 150 MB across the producers), about 1.3 in the compressed file (offsets climb by small steps,
statuses and partitions repeat), and the checker compares them with the read-back in bulk. A worker's
delivery callback can record one outcome at a time (`record_ack`, `record_failure`: a few numpy scalar
stores), or buffer sequences and record them in bulk. Each sequence gets one outcome; a later one replaces
an earlier one.
"""

from __future__ import annotations

import zipfile
from pathlib import Path

import numpy as np

from kafkabench.errors import KafkabenchError

UNKNOWN, ACKNOWLEDGED, FAILED, ABORTED = 0, 1, 2, 3
MAX_PRODUCER = 65_535
FORMAT = 1
ARRAYS = {"status": np.uint8, "partition": np.int32, "offset": np.int64, "error": np.uint16}
MAPPED_META, MAPPED_NAMES = "history.meta", "error_names.txt"  # beside a mapped history's .npy files


class HistoryFileError(KafkabenchError):
    """A history file is missing, damaged or not a delivery history."""


class History:
    """The outcome of every message one producer sent."""

    def __init__(self, producer: int, sent: int, error_names: list[str] | None = None):
        if not 0 <= producer <= MAX_PRODUCER:
            raise ValueError(f"producer {producer}: must be 0..{MAX_PRODUCER}")
        if sent < 0:
            raise ValueError(f"sent {sent}: must be >= 0")
        self.producer = producer
        self.status = np.zeros(sent, np.uint8)
        self.partition = np.full(sent, -1, np.int32)
        self.offset = np.full(sent, -1, np.int64)
        self.error = np.zeros(sent, np.uint16)
        self.error_names = list(error_names) if error_names else [""]
        if self.error_names[0] != "":
            raise ValueError(f"error_names[0] is {self.error_names[0]!r}: index 0 means no error, its name is ''")
        self._codes = {name: code for code, name in enumerate(self.error_names)}
        self._names_file: Path | None = None  # a mapped history's error names, appended as they appear

    def error_code(self, name: str) -> int:
        """The index of an error name, added on first use (and, for a mapped history, written at once)."""
        code = self._codes.get(name)
        if code is None:
            code = len(self.error_names)
            if code > np.iinfo(np.uint16).max:
                raise ValueError(f"more than {code} distinct error names")
            if "\n" in name:
                raise ValueError(f"error name {name!r}: one line, please")
            self.error_names.append(name)
            self._codes[name] = code
            if self._names_file is not None:
                with self._names_file.open("a") as names:
                    names.write(name + "\n")
        return code

    @classmethod
    def mapped(cls, directory: Path, producer: int, sent: int) -> History:
        """A history whose arrays live in files in `directory` (numpy .npy, memory-mapped and shared): an
        outcome is in the file as soon as it is stored, so a worker that exits at once (os._exit, a kill -9)
        loses nothing it had been told. Error names go to a text file as each first appears."""
        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        history = cls(producer, 0)
        for name, dtype in ARRAYS.items():
            array = np.lib.format.open_memmap(directory / f"{name}.npy", mode="w+", dtype=dtype, shape=(sent,))
            if name in ("partition", "offset"):
                array[:] = -1
            setattr(history, name, array)
        (directory / MAPPED_META).write_text(f"{FORMAT} {producer} {sent}\n")
        history._names_file = directory / MAPPED_NAMES
        history._names_file.write_text("")
        return history

    def end_at(self, sent: int) -> None:
        """A mapped history whose producer was told to stop before its count: only the first `sent` sequences were
        handed to the client; the files keep their size, and their meta says how many of them count."""
        if not 0 <= sent <= self.sent:
            raise ValueError(f"sent {sent}: the history holds {self.sent}")
        for name in ARRAYS:
            setattr(self, name, getattr(self, name)[:sent])
        self._names_file.with_name(MAPPED_META).write_text(f"{FORMAT} {self.producer} {sent}\n")

    @classmethod
    def open_mapped(cls, directory: Path) -> History:
        """A mapped history as its files hold it, read into memory (the writer may have exited at any point)."""
        directory = Path(directory)
        try:
            version, producer, sent = (int(word) for word in (directory / MAPPED_META).read_text().split())
            names = (directory / MAPPED_NAMES).read_text().splitlines()
            history = cls(producer, 0, ["", *names])
            for name, dtype in ARRAYS.items():
                array = np.load(directory / f"{name}.npy", allow_pickle=False)
                if version != FORMAT or array.dtype != dtype or array.ndim != 1 or len(array) < sent:
                    raise ValueError(f"{name}.npy: {array.dtype}{list(array.shape)}, expected {np.dtype(dtype)}[{sent}]")
                setattr(history, name, array[:sent])  # longer: a producer told to stop before its count
        except (OSError, ValueError) as error:
            raise HistoryFileError(f"{directory}: not a readable mapped delivery history ({error})") from error
        return history

    def record_ack(self, sequence: int, partition: int, offset: int) -> None:
        self.status[sequence] = ACKNOWLEDGED
        self.partition[sequence] = partition
        self.offset[sequence] = offset
        self.error[sequence] = 0

    def record_failure(self, sequence: int, error: str) -> None:
        self.status[sequence] = FAILED
        self.partition[sequence] = -1
        self.offset[sequence] = -1
        self.error[sequence] = self.error_code(error)

    def record_unknown(self, sequence: int, error: str) -> None:
        """An answer that says nothing of the outcome (a timeout: the record may be written or not)."""
        self.status[sequence] = UNKNOWN
        self.partition[sequence] = -1
        self.offset[sequence] = -1
        self.error[sequence] = self.error_code(error)

    def record_acks(self, sequences: np.ndarray, partitions: np.ndarray | int, offsets: np.ndarray) -> None:
        """Acknowledgements in bulk; `partitions` may be one partition for all."""
        sequences = np.asarray(sequences)
        partitions, offsets = np.broadcast_to(partitions, sequences.shape), np.asarray(offsets)
        if offsets.shape != sequences.shape:
            raise ValueError(f"{len(sequences)} sequences but {len(offsets)} offsets")
        if len(sequences) and (partitions.min() < 0 or offsets.min() < -1):
            raise ValueError("an acknowledgement needs a partition >= 0 and an offset >= 0 (or -1: none given)")
        self.status[sequences] = ACKNOWLEDGED
        self.partition[sequences] = partitions
        self.offset[sequences] = offsets
        self.error[sequences] = 0

    def record_failures(self, sequences: np.ndarray, error: str | np.ndarray) -> None:
        """Failures in bulk, all with one error name, or each with its code from `error_code`."""
        sequences = np.asarray(sequences)
        self.status[sequences] = FAILED
        self.partition[sequences] = -1
        self.offset[sequences] = -1
        self.error[sequences] = self.error_code(error) if isinstance(error, str) else error

    def record_unknowns(self, sequences: np.ndarray, error: str | np.ndarray) -> None:
        """Answers in bulk that say nothing of the outcome (timeouts), with one error name or each its code."""
        sequences = np.asarray(sequences)
        self.status[sequences] = UNKNOWN
        self.partition[sequences] = -1
        self.offset[sequences] = -1
        self.error[sequences] = self.error_code(error) if isinstance(error, str) else error

    def record_aborted(self, sequences: np.ndarray) -> None:
        """Sends whose transaction was aborted; where an acknowledgement put them stays (an aborted record is
        written, marked aborted by the transaction's end)."""
        self.status[np.asarray(sequences)] = ABORTED

    @property
    def sent(self) -> int:
        return len(self.status)

    @property
    def acked(self) -> int:
        return int(np.count_nonzero(self.status == ACKNOWLEDGED))

    @property
    def failed(self) -> int:
        return int(np.count_nonzero(self.status == FAILED))

    @property
    def unknown(self) -> int:
        return int(np.count_nonzero(self.status == UNKNOWN))

    @property
    def aborted(self) -> int:
        return int(np.count_nonzero(self.status == ABORTED))

    @property
    def nbytes(self) -> int:
        return sum(getattr(self, name).nbytes for name in ARRAYS)

    def error_counts(self) -> dict[str, int]:
        """Sends per error name they were reported with."""
        counts = np.bincount(self.error, minlength=len(self.error_names))
        return {name: int(count) for name, count in zip(self.error_names, counts) if name and count}

    def save(self, path: Path, compress: bool = True) -> None:
        """One .npz file of numpy arrays (no pickle). Compressing takes about 0.3 s per million messages."""
        write = np.savez_compressed if compress else np.savez
        with Path(path).open("wb") as out:
            write(out, format=np.int64(FORMAT), producer=np.int64(self.producer),
                  error_names=np.array(self.error_names, dtype=str),
                  **{name: getattr(self, name) for name in ARRAYS})

    @classmethod
    def load(cls, path: Path) -> History:
        try:
            with np.load(path, allow_pickle=False) as data:
                return cls._from_arrays(data)
        except (OSError, ValueError, KeyError, zipfile.BadZipFile) as error:
            raise HistoryFileError(f"{path}: not a readable delivery history ({error})") from error

    @classmethod
    def _from_arrays(cls, data) -> History:
        if int(data["format"]) != FORMAT:
            raise ValueError(f"format {int(data['format'])}, this version reads {FORMAT}")
        history = cls(int(data["producer"]), 0, [str(name) for name in data["error_names"]])
        arrays = {name: data[name] for name in ARRAYS}  # each access of an npz entry reads it again
        for name, dtype in ARRAYS.items():
            if arrays[name].dtype != dtype or arrays[name].shape != arrays["status"].shape:
                raise ValueError(f"{name}: {arrays[name].dtype}{list(arrays[name].shape)}, expected "
                                 f"{np.dtype(dtype)}{list(arrays['status'].shape)}")
            setattr(history, name, arrays[name])
        return history

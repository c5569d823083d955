"""The value a lab sends: a file's bytes, or `size` incompressible bytes generated from a seed.

Planning a run only describes its payload (`Payload`): its size is all a check needs. The bytes are made when the
run writes them for its workers, after the cluster has answered, in pieces straight into that file: a value of a
gigabyte takes seconds and its memory to make, which a refused scenario or an unreachable broker must not cost,
and the orchestrator never holds it whole (the workers that send it do).
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from kafkabench.config.client_settings import RECORD_OVERHEAD
from kafkabench.errors import ConfigError

# Kafka counts a record batch's bytes and every limit on its way (message.max.bytes, max.request.size, the fetch
# sizes) in signed 32-bit ints. fit_payload raises those limits to the value plus RECORD_OVERHEAD (the batch's
# 61-byte header, the record's framing of at most 21 bytes, its key and headers, rounded up), so this is the
# largest value whose limits can still be given; a Java client's byte[] of it fits as well.
MAX_VALUE_BYTES = 2**31 - 1 - RECORD_OVERHEAD
TOO_LARGE = (f"at most {MAX_VALUE_BYTES} bytes: Kafka's record sizes are 32-bit "
             f"(2 GiB less {RECORD_OVERHEAD} for the record batch around the value)")

# a multiple of 4 bytes: pieces of randbytes then join to the very bytes one call for the whole size gives
CHUNK_BYTES = 16 * 2**20


def check_value_size(size: int) -> int:
    """A scenario's validator: `size` when one Kafka record can carry that many bytes of value."""
    if size > MAX_VALUE_BYTES:
        raise ValueError(f"must be {TOO_LARGE}")
    return size


def generated_chunks(size: int, seed: int) -> Iterator[bytes]:
    """`size` incompressible bytes, the same for the same seed (runs are compared across machines and versions), in
    pieces of CHUNK_BYTES: the bytes `random.Random(seed).randbytes(size)` gives, without that call's limit
    (CPython's overflows from 256 MiB on, its bit count being a C int)."""
    draw = random.Random(seed)
    for start in range(0, size, CHUNK_BYTES):
        yield draw.randbytes(min(CHUNK_BYTES, size - start))


def file_sha256(path: Path) -> str:
    """The sha256 (hex) of the payload file the workers read, which they check every value against."""
    digest = hashlib.sha256()
    with path.open("rb") as file:
        while chunk := file.read(CHUNK_BYTES):
            digest.update(chunk)
    return digest.hexdigest()


@dataclass(frozen=True)
class Payload:
    """One value: the file at `path`, or `size` bytes generated from `seed`. `len()` is its size in bytes."""

    size: int
    seed: int = 0
    path: Path | None = None

    @classmethod
    def generated(cls, size: int, seed: int) -> Payload:
        check_value_size(size)  # scenarios refuse it first; this guards every other caller
        return cls(size, seed)

    @classmethod
    def of_file(cls, path: Path) -> Payload:
        """Checked now without reading it: that it can be opened and that one record can carry it."""
        try:
            with path.open("rb") as file:
                size = file.seek(0, 2)
        except FileNotFoundError:
            raise ConfigError(f"payload file {path} does not exist") from None
        except OSError as exc:
            raise ConfigError(f"payload file {path} cannot be read: {exc.strerror}") from None
        if size > MAX_VALUE_BYTES:
            raise ConfigError(f"payload file {path} has {size} bytes; a value can have {TOO_LARGE}")
        return cls(size, path=path)

    def __len__(self) -> int:
        return self.size

    def write(self, path: Path) -> None:
        """The bytes, made (or copied) piece by piece into `path`."""
        with path.open("wb") as out:
            for chunk in self._chunks():
                out.write(chunk)

    def _chunks(self) -> Iterator[bytes]:
        if self.path is None:
            yield from generated_chunks(self.size, self.seed)
            return
        try:
            with self.path.open("rb") as file:
                while chunk := file.read(CHUNK_BYTES):
                    yield chunk
        except OSError as exc:  # it was there when the run was checked
            raise ConfigError(f"payload file {self.path} cannot be read: {exc.strerror}") from None

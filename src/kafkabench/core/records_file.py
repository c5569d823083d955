"""A file of records for a producer to replay: each value as a 4-byte big-endian length and its bytes.

The compression lab generates and encodes its rows into one of these before any cell runs, so neither the
generator nor the encoder is ever inside a producer's measured loop.
"""

from __future__ import annotations

import struct
from pathlib import Path
from typing import Iterable, Iterator

_LENGTH = struct.Struct(">I")


def write_records(path: Path, values: Iterable[bytes]) -> tuple[int, int]:
    """Write the values; return (records, payload bytes)."""
    count = total = 0
    with path.open("wb", buffering=1 << 20) as out:
        for value in values:
            out.write(_LENGTH.pack(len(value)))
            out.write(value)
            count += 1
            total += len(value)
    return count, total


def read_records(path: Path) -> Iterator[bytes]:
    with path.open("rb", buffering=1 << 20) as source:
        while header := source.read(4):
            (length,) = _LENGTH.unpack(header)
            value = source.read(length)
            if len(value) != length:
                raise ValueError(f"{path} ends inside a record")
            yield value

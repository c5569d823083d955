"""A file of records for a producer to replay: each value as a 4-byte big-endian length and its bytes.

The compression lab generates and encodes its rows into one of these before any cell runs, so neither the
generator nor the encoder is ever inside a producer's measured loop. Records are written a block at a
time, framed already (`frame`, or an encoder that frames its own blocks), with no per-record Python call.
"""

from __future__ import annotations

import itertools
import struct
import time
from pathlib import Path
from typing import Iterable, Iterator, NamedTuple, Sequence

LENGTH = struct.Struct(">I")
LENGTH_DTYPE = ">u4"  # the same header, for encoders that frame with numpy
BLOCK = 65_536


class Block(NamedTuple):
    data: bytes  # the records framed as in the file
    records: int
    payload_bytes: int
    largest: int


def frame(values: Sequence[bytes]) -> Block:
    lengths = list(map(len, values))
    data = b"".join(itertools.chain.from_iterable(zip(map(LENGTH.pack, lengths), values)))
    return Block(data, len(values), sum(lengths), max(lengths, default=0))


class Written(NamedTuple):
    records: int
    payload_bytes: int
    largest: int
    write_s: float  # of the time, how much went into writing (the rest: producing the blocks)


def write_blocks(path: Path, blocks: Iterable[Block]) -> Written:
    records = payload = largest = 0
    write_s = 0.0
    with path.open("wb") as out:
        for block in blocks:
            started = time.perf_counter()
            out.write(block.data)
            write_s += time.perf_counter() - started
            records += block.records
            payload += block.payload_bytes
            largest = max(largest, block.largest)
    return Written(records, payload, largest, write_s)


def frames(values: Iterable[bytes]) -> Iterator[Block]:
    """The values framed, BLOCK records at a time."""
    values = iter(values)
    while batch := list(itertools.islice(values, BLOCK)):
        yield frame(batch)


def write_records(path: Path, values: Iterable[bytes]) -> Written:
    return write_blocks(path, frames(values))


def read_records(path: Path) -> Iterator[bytes]:
    with path.open("rb", buffering=1 << 20) as source:
        while header := source.read(4):
            (length,) = LENGTH.unpack(header)
            value = source.read(length)
            if len(value) != length:
                raise ValueError(f"{path} ends inside a record")
            yield value

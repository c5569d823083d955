"""A delivery message's id in its value: MAGIC, producer (uint16) and sequence (uint64), big-endian, in the
first ID_BYTES bytes; the rest of the value is padding up to the asked size. Decoded in bulk: one numpy
structured view over the joined headers of a batch of records."""

from __future__ import annotations

import struct

import numpy as np

MAGIC = b"kbd1"
ID_BYTES = len(MAGIC) + 2 + 8
HEADER = np.dtype([("magic", "S4"), ("producer", ">u2"), ("sequence", ">u8")])
_PACK = struct.Struct(">4sHQ")


def encode(producer: int, sequence: int, size: int = ID_BYTES) -> bytes:
    return _PACK.pack(MAGIC, producer, sequence).ljust(size, b"\0")


def decode(values: list[bytes | None]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(producer uint16, sequence int64, which values carry an id) for a batch of record values. A sequence
    beyond int64 comes out negative, which the checker counts as a stray. Values of one length (a delivery run's)
    are viewed in place, without a slice each."""
    if values and None not in values and len(lengths := set(map(len, values))) == 1 and (size := lengths.pop()) >= ID_BYTES:
        parsed = np.frombuffer(b"".join(values), dtype=_padded(size))
        return parsed["producer"].astype(np.uint16), parsed["sequence"].astype(np.int64), parsed["magic"] == MAGIC
    headers = [value[:ID_BYTES] if value is not None and len(value) >= ID_BYTES else bytes(ID_BYTES) for value in values]
    parsed = np.frombuffer(b"".join(headers), dtype=HEADER)
    ours = parsed["magic"] == MAGIC
    return parsed["producer"].astype(np.uint16), parsed["sequence"].astype(np.int64), ours


def _padded(size: int) -> np.dtype:
    """HEADER followed by padding up to `size` bytes: one whole value per item."""
    return np.dtype({"names": ["magic", "producer", "sequence"], "formats": ["S4", ">u2", ">u8"], "offsets": [0, 4, 6],
                     "itemsize": size})

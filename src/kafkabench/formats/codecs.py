"""JSON, Protobuf and Avro encoders for a dataset's rows; `raw` for files that are already bytes."""

from __future__ import annotations

import io
import itertools
import json
from operator import itemgetter
from typing import Any, Callable

import fastavro
import numpy as np

from kafkabench.core.records_file import LENGTH, LENGTH_DTYPE, Block
from kafkabench.datasets.purchases import CUSTOMER_FIELDS, EVENT_FIELDS, TIMESTAMP_WIDTH, PurchasePools, timestamps
from kafkabench.datasets.sources import Dataset
from kafkabench.errors import ConfigError

FORMATS = ("json", "protobuf", "avro")
# the order PurchaseEncoder concatenates a row's fragments in
PURCHASE_AVRO_ORDER = ("send_tm", "receive_tm", *EVENT_FIELDS, *CUSTOMER_FIELDS)


class Format:
    def __init__(self, name: str, encode: Callable[[Any], bytes], decode: Callable[[bytes], Any]) -> None:
        self.name = name
        self.encode = encode
        self.decode = decode


def make_format(name: str, dataset: Dataset) -> Format:
    if dataset.kind == "files":
        return Format("raw", bytes, bytes)
    if name == "json":
        return Format("json", _json_encode, lambda data: json.loads(data))
    if name == "avro":
        return _avro(dataset)
    if name == "protobuf":
        return _protobuf(dataset)
    raise ConfigError(f"unknown format {name!r}; known: {', '.join(FORMATS)}")


def _json_encode(row: dict) -> bytes:
    return json.dumps(row, ensure_ascii=False, separators=(",", ":")).encode()


def _avro_schema(dataset: Dataset) -> dict:
    if dataset.kind == "purchases":
        return fastavro.parse_schema(_purchase_avro_schema(PURCHASE_AVRO_ORDER))
    else:
        fields = [{"name": _avro_name(f), "type": "string"} for f in dataset.fields]
    return fastavro.parse_schema({"type": "record", "name": "Row", "namespace": "kafkabench", "fields": fields})


def _avro_name(field: str) -> str:
    cleaned = "".join(c if c.isalnum() or c == "_" else "_" for c in field)
    return cleaned if cleaned and not cleaned[0].isdigit() else f"f_{cleaned}"


def _avro(dataset: Dataset) -> Format:
    schema = _avro_schema(dataset)
    rename = {f: _avro_name(f) for f in dataset.fields} if dataset.kind == "csv" else None

    def encode(row: dict) -> bytes:
        out = io.BytesIO()
        fastavro.schemaless_writer(out, schema, {rename[k]: v for k, v in row.items()} if rename else row)
        return out.getvalue()

    def decode(data: bytes) -> dict:
        row = fastavro.schemaless_reader(io.BytesIO(data), schema)
        return {original: row[name] for original, name in rename.items()} if rename else row

    return Format("avro", encode, decode)


def _protobuf(dataset: Dataset) -> Format:
    if dataset.kind != "purchases":
        raise ConfigError("the protobuf format needs a schema: it is available for --dataset purchases; CSV rows go as json or avro")
    from kafkabench.formats.purchase_pb2 import Purchase

    def encode(row: dict) -> bytes:
        return Purchase(**{k: v for k, v in row.items() if v is not None}).SerializeToString()

    def decode(data: bytes) -> dict:
        message = Purchase.FromString(data)
        row = {field: getattr(message, field) for field in dataset.fields}
        row["receive_tm"] = message.receive_tm if message.HasField("receive_tm") else None
        return row

    return Format("protobuf", encode, decode)


def _purchase_avro_schema(fields: tuple[str, ...]) -> dict:
    types = {"send_tm": "string", "receive_tm": ["string", "null"], "buy_ipaddr": "string", "buy_login_name": "string"}
    return {"type": "record", "name": "Purchase", "namespace": "kafkabench",
            "fields": [{"name": f, "type": types.get(f, "long")} for f in fields]}


class PurchaseEncoder:
    """Rows of `pools`, encoded and framed for a records file a block at a time, from pre-encoded fragments.

    JSON objects, Protobuf messages and Avro records (in PURCHASE_AVRO_ORDER) are sequences of fields, so a
    row is its times, its event's fragment and its customer's fragment concatenated; decoding gives exactly
    `pools.rows(...)`. The record's length header and the two framed times are one fixed-width numpy row;
    a row whose receive time is null ends early, padded with NULs that numpy's bytes conversion drops (no
    format's null ends in a NUL byte: that is why Avro's union lists "string" first).
    """

    def __init__(self, name: str, pools: PurchasePools) -> None:
        self.pools = pools
        events = pools.events
        if name == "json":
            members, values = "".join(f'"{field}":%d,' for field in EVENT_FIELDS), itemgetter(*EVENT_FIELDS)  # all integers
            self.events = [(members % values(e)).encode() for e in events]
            self.customers = [f'"buy_ipaddr":"{ip}","buy_login_id":{login},"buy_login_name":"{name}"}}'.encode()
                              for ip, login, name in pools.customers]  # digits, dots and Hangul: nothing to escape
            sent, received, missing = (b'{"send_tm":"', b'",'), (b'"receive_tm":"', b'",'), b'"receive_tm":null,'
        elif name == "protobuf":  # field 7 send_tm, field 14 receive_tm: tag, length 19, ASCII; absent when null
            from kafkabench.formats.purchase_pb2 import Purchase

            self.events = [Purchase(**e).SerializeToString() for e in events]
            self.customers = [Purchase(buy_ipaddr=ip, buy_login_id=login, buy_login_name=name).SerializeToString()
                              for ip, login, name in pools.customers]
            sent, received, missing = (b"\x3a\x13", b""), (b"\x72\x13", b""), b""
        elif name == "avro":  # strings: zig-zag length 19 (0x26); the union: branch 0 string, 1 null
            self.events = _avro_fragments(EVENT_FIELDS, events)
            self.customers = _avro_customers(pools.customers)
            sent, received, missing = (b"\x26", b""), (b"\x00\x26", b""), b"\x02"
        else:
            raise ConfigError(f"unknown format {name!r}; known: {', '.join(FORMATS)}")
        self._frames = (sent, received)
        received_width = len(received[0]) + TIMESTAMP_WIDTH + len(received[1])
        self._missing = np.frombuffer(missing.ljust(received_width, b"\0"), dtype=np.uint8)
        self._shorter = received_width - len(missing)
        self._event_lengths = np.array([len(e) for e in self.events])
        self._customer_lengths = np.array([len(c) for c in self.customers])

    def encode_block(self, start: int, stop: int) -> Block:
        """Rows start..stop of one pool cycle (datasets.purchases.blocks), framed."""
        picks = self.pools.picks(start, stop)
        (sent_before, sent_after), (received_before, received_after) = self._frames
        times = np.concatenate([_constant(bytes(LENGTH.size), picks), _constant(sent_before, picks), timestamps(picks.sent),
                                _constant(sent_after, picks), _constant(received_before, picks),
                                timestamps(np.maximum(picks.received, 0)), _constant(received_after, picks)], axis=1)
        missing = picks.received < 0
        times[missing, times.shape[1] - len(self._missing):] = self._missing
        lengths = (times.shape[1] - LENGTH.size - self._shorter * missing
                   + self._event_lengths[picks.event] + self._customer_lengths[picks.customer])
        times[:, :LENGTH.size] = lengths.astype(LENGTH_DTYPE)[:, None].view(np.uint8)
        rows = times.view(f"S{times.shape[1]}").ravel().tolist()  # bytes per row, trailing NULs dropped
        data = b"".join(itertools.chain.from_iterable(zip(rows, map(self.events.__getitem__, picks.event.tolist()),
                                                          map(self.customers.__getitem__, picks.customer.tolist()))))
        return Block(data, len(lengths), int(lengths.sum()), int(lengths.max(initial=0)))


def _constant(value: bytes, picks) -> np.ndarray:
    return np.broadcast_to(np.frombuffer(value, dtype=np.uint8), (len(picks.sent), len(value)))


def _avro_customers(customers: list[tuple[str, int, str]]) -> list[bytes]:
    """Avro records (ip, login id, name) in bulk: fastavro costs ~2 us a call, and customers grow with the rows.
    Avro's binary encoding: a string is its zig-zag varint byte length and its UTF-8 bytes, a long its
    zig-zag varint. The generator's strings are under 64 bytes (one length byte) and its login ids 8-digit
    (four varint bytes, the last one never 0); anything else goes through fastavro."""
    ips, logins, names = zip(*customers) if customers else ((), (), ())
    ips, names = [ip.encode() for ip in ips], [name.encode() for name in names]
    zigzag = np.array(logins, dtype=np.int64) << 1
    if not ((zigzag >= 1 << 21).all() and (zigzag < 1 << 28).all() and max(map(len, ips + names), default=0) < 64):
        return _avro_fragments(CUSTOMER_FIELDS, [dict(zip(CUSTOMER_FIELDS, c)) for c in customers])
    varints = np.stack([(zigzag >> shift) & 0x7F | (0x80 if shift < 21 else 0) for shift in (0, 7, 14, 21)], axis=1)
    return [bytes((2 * len(ip),)) + ip + login + bytes((2 * len(name),)) + name
            for ip, login, name in zip(ips, varints.astype(np.uint8).view("S4").ravel().tolist(), names)]


def _avro_fragments(fields: tuple[str, ...], records: list[dict]) -> list[bytes]:
    schema = fastavro.parse_schema(_purchase_avro_schema(fields))
    out = io.BytesIO()
    fragments = []
    for record in records:
        fastavro.schemaless_writer(out, schema, record)
        fragments.append(out.getvalue())
        out.seek(0)
        out.truncate()
    return fragments

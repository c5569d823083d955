"""JSON, Protobuf and Avro encoders for a dataset's rows; `raw` for files that are already bytes."""

from __future__ import annotations

import io
import json
from typing import Any, Callable

import fastavro

from kafkabench.datasets.purchases import CUSTOMER_FIELDS, EVENT_FIELDS, PurchasePools, timestamp
from kafkabench.datasets.sources import Dataset
from kafkabench.errors import ConfigError

FORMATS = ("json", "protobuf", "avro")
# event fields, then customer fields, then the times: the order row fragments are concatenated in
PURCHASE_AVRO_ORDER = (*EVENT_FIELDS, *CUSTOMER_FIELDS, "send_tm", "receive_tm")


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
    types = {"send_tm": "string", "receive_tm": ["null", "string"], "buy_ipaddr": "string", "buy_login_name": "string"}
    return {"type": "record", "name": "Purchase", "namespace": "kafkabench",
            "fields": [{"name": f, "type": types.get(f, "long")} for f in fields]}


def fast_purchase_encoder(name: str, pools: PurchasePools) -> Callable[[int], bytes]:
    """Row i of `pools`, encoded: pre-encoded fragments of its event and customer plus its two times.
    JSON objects, Protobuf messages and Avro records (in PURCHASE_AVRO_ORDER) are all sequences of
    fields, so a row's bytes are the concatenation; decoding gives exactly `pools.row(i)`."""
    events = [fields for fields, _ in pools.events]
    customers = [dict(zip(CUSTOMER_FIELDS, c)) for c in pools.customers]
    pick = pools.pick
    if name == "json":
        ev = [_json_encode(e)[1:-1] for e in events]
        cu = [_json_encode(c)[1:-1] for c in customers]

        def encode(i: int) -> bytes:
            event, customer, sent, received = pick(i)
            tail = b'"' + timestamp(received).encode() + b'"}' if received is not None else b"null}"
            return b"{" + ev[event] + b"," + cu[customer] + b',"send_tm":"' + timestamp(sent).encode() + b'","receive_tm":' + tail
        return encode
    if name == "protobuf":
        from kafkabench.formats.purchase_pb2 import Purchase

        ev = [Purchase(**e).SerializeToString() for e in events]
        cu = [Purchase(**c).SerializeToString() for c in customers]

        def encode(i: int) -> bytes:  # field 7 send_tm, field 14 receive_tm: tag, length 19, ASCII
            event, customer, sent, received = pick(i)
            tail = b"\x72\x13" + timestamp(received).encode() if received is not None else b""
            return ev[event] + cu[customer] + b"\x3a\x13" + timestamp(sent).encode() + tail
        return encode
    if name == "avro":
        ev = [_avro_bytes(_purchase_avro_schema(EVENT_FIELDS), e) for e in events]
        cu = [_avro_bytes(_purchase_avro_schema(CUSTOMER_FIELDS), c) for c in customers]

        def encode(i: int) -> bytes:  # strings: zig-zag length 19 (0x26); the union: branch 0 null, 1 string
            event, customer, sent, received = pick(i)
            tail = b"\x02\x26" + timestamp(received).encode() if received is not None else b"\x00"
            return ev[event] + cu[customer] + b"\x26" + timestamp(sent).encode() + tail
        return encode
    raise ConfigError(f"unknown format {name!r}; known: {', '.join(FORMATS)}")


def _avro_bytes(schema: dict, record: dict) -> bytes:
    out = io.BytesIO()
    fastavro.schemaless_writer(out, fastavro.parse_schema(schema), record)
    return out.getvalue()

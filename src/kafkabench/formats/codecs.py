"""JSON, Protobuf and Avro encoders for a dataset's rows; `raw` for files that are already bytes."""

from __future__ import annotations

import io
import json
from typing import Any, Callable

import fastavro

from kafkabench.datasets.sources import Dataset
from kafkabench.errors import ConfigError

FORMATS = ("json", "protobuf", "avro")


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
        from kafkabench.datasets.purchases import purchases

        sample = next(purchases(1))
        fields = [{"name": k, "type": "long" if isinstance(v, int) else "double" if isinstance(v, float) else "string"}
                  for k, v in sample.items() if k != "receive_tm"]
        fields.append({"name": "receive_tm", "type": ["null", "string"]})
        order = {name: index for index, name in enumerate(dataset.fields)}
        fields.sort(key=lambda f: order[f["name"]])
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

"""librdkafka's own vocabulary, read from the library the confluent-kafka wheel bundles (through ctypes), so
the names, roles and aliases kafkabench checks `librdkafka:NAME` settings against are never typed by hand.

- `conf_dump()`: every property that has a default, with it (`rd_kafka_conf_dump`).
- `properties()`: every documented property with the role librdkafka gives it (the C/P column of
  CONFIGURATION.md, printed by `rd_kafka_conf_properties_show`) and what it is an alias of. The dump alone
  would miss properties without a default (`group.id`, `sasl.password`, `transactional.id`).
- `refusal(name, value)`: what `rd_kafka_conf_set` says of one setting: the final word on a name.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import glob
import os
import re
import tempfile
from dataclasses import dataclass
from functools import cache

# where librdkafka's name for the same setting differs from Java's
LIBRDKAFKA_NAMES = {
    "max.request.size": "message.max.bytes",
    "fetch.max.wait.ms": "fetch.wait.max.ms",
    "receive.buffer.bytes": "socket.receive.buffer.bytes",
    "send.buffer.bytes": "socket.send.buffer.bytes",
    # KIP-390's per-codec levels; librdkafka has one level for whichever codec is set
    "compression.gzip.level": "compression.level",
    "compression.lz4.level": "compression.level",
    "compression.zstd.level": "compression.level",
}

BOTH_ROLES = frozenset({"producer", "consumer"})
_ROLES = {"*": BOTH_ROLES, "P": frozenset({"producer"}), "C": frozenset({"consumer"})}
_ALIAS = re.compile(r"(?:\*\*DEPRECATED\*\* )?Alias for `([^`]+)`")
_CONF_UNKNOWN = -2  # rd_kafka_conf_res_t: RD_KAFKA_CONF_UNKNOWN
_CONF_OK = 0


@dataclass(frozen=True)
class Property:
    name: str
    roles: frozenset[str]  # producer, consumer or both, as librdkafka documents it
    alias_of: str | None = None


@dataclass(frozen=True)
class Refusal:
    unknown_name: bool  # librdkafka has no such property (else: it rejects the value)
    message: str


@cache
def _library() -> ctypes.CDLL:
    import confluent_kafka

    bundled = glob.glob(os.path.join(os.path.dirname(confluent_kafka.__file__), os.pardir, "confluent_kafka.libs", "librdkafka*"))
    lib = ctypes.CDLL(bundled[0] if bundled else "librdkafka.so.1")
    lib.rd_kafka_conf_new.restype = ctypes.c_void_p
    lib.rd_kafka_topic_conf_new.restype = ctypes.c_void_p
    lib.rd_kafka_conf_dump.restype = ctypes.POINTER(ctypes.c_char_p)
    lib.rd_kafka_conf_dump.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_size_t)]
    lib.rd_kafka_topic_conf_dump.restype = ctypes.POINTER(ctypes.c_char_p)
    lib.rd_kafka_topic_conf_dump.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_size_t)]
    lib.rd_kafka_conf_dump_free.argtypes = [ctypes.POINTER(ctypes.c_char_p), ctypes.c_size_t]
    lib.rd_kafka_conf_destroy.argtypes = [ctypes.c_void_p]
    lib.rd_kafka_topic_conf_destroy.argtypes = [ctypes.c_void_p]
    lib.rd_kafka_conf_set.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_size_t]
    lib.rd_kafka_conf_set.restype = ctypes.c_int
    lib.rd_kafka_conf_properties_show.argtypes = [ctypes.c_void_p]
    return lib


def conf_dump() -> dict[str, str]:
    """librdkafka's defaults: the global and the default topic configuration, dumped by the library."""
    lib = _library()
    values: dict[str, str] = {}
    for new, dump, destroy in ((lib.rd_kafka_conf_new, lib.rd_kafka_conf_dump, lib.rd_kafka_conf_destroy),
                               (lib.rd_kafka_topic_conf_new, lib.rd_kafka_topic_conf_dump, lib.rd_kafka_topic_conf_destroy)):
        conf = new()
        count = ctypes.c_size_t()
        pairs = dump(conf, ctypes.byref(count))
        values.update({pairs[i].decode(): pairs[i + 1].decode() for i in range(0, count.value, 2)})
        lib.rd_kafka_conf_dump_free(pairs, count)
        destroy(conf)
    return values


@cache
def properties() -> dict[str, Property]:
    """Every property a user can set as text: the documented ones with their roles, then the dump's
    undocumented ones (for both roles: librdkafka says nothing narrower of them)."""
    rows = list(_rows(_properties_table()))
    documented = _documented(rows)
    listed = {name for name, _roles, _description in rows}
    hidden = {name: Property(name, BOTH_ROLES) for name in conf_dump() if name not in listed}
    return {**documented, **hidden}


def roles(name: str) -> frozenset[str]:
    """Where librdkafka says a name applies; both roles for one it accepts but does not document."""
    known = properties().get(name)
    return known.roles if known is not None else BOTH_ROLES


def canonical(name: str) -> str:
    """The property an alias stands for (`linger.ms` -> `queue.buffering.max.ms`); a property itself otherwise."""
    known = properties().get(name)
    return known.alias_of if known is not None and known.alias_of else name


def refusal(name: str, value: str) -> Refusal | None:
    """Ask librdkafka itself: set name=value on a fresh configuration (no client is made, nothing connects)."""
    lib = _library()
    conf = lib.rd_kafka_conf_new()
    error = ctypes.create_string_buffer(512)
    try:
        answer = lib.rd_kafka_conf_set(conf, name.encode(), value.encode(), error, len(error))
    finally:
        lib.rd_kafka_conf_destroy(conf)
    if answer == _CONF_OK:
        return None
    return Refusal(answer == _CONF_UNKNOWN, error.value.decode(errors="replace").strip())


def _properties_table() -> str:
    """CONFIGURATION.md as this librdkafka prints it; empty where no C stdio can be handed to it."""
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c"))
        libc.fopen.restype = ctypes.c_void_p
        libc.fopen.argtypes = [ctypes.c_char_p, ctypes.c_char_p]
        libc.fclose.argtypes = [ctypes.c_void_p]
        with tempfile.TemporaryDirectory(prefix="kafkabench-librdkafka-") as directory:
            path = os.path.join(directory, "CONFIGURATION.md")
            stream = libc.fopen(path.encode(), b"w")
            if not stream:
                return ""
            _library().rd_kafka_conf_properties_show(stream)
            libc.fclose(stream)
            with open(path, encoding="utf-8", errors="replace") as table:
                return table.read()
    except (OSError, AttributeError, TypeError):
        return ""


def _rows(table: str):
    """(name, roles, description) of each row `name | C/P | range | default | importance | description`."""
    for line in table.splitlines():
        cells = line.split("|", 5)
        if len(cells) == 6 and cells[1].strip() in _ROLES:
            yield cells[0].strip(), _ROLES[cells[1].strip()], cells[5].strip()


def _documented(rows: list[tuple[str, frozenset[str], str]]) -> dict[str, Property]:
    """Properties set only through a dedicated C function (callbacks, pointers) are left out: they cannot be
    given as text. A name listed in both tables (global and topic) takes the roles of both."""
    found: dict[str, Property] = {}
    not_aliases: set[str] = set()
    for name, roles_, description in rows:
        if "*Type: see dedicated API*" in description:
            continue
        alias = _ALIAS.match(description)
        if alias is None:
            not_aliases.add(name)
        earlier = found.get(name, Property(name, frozenset()))
        found[name] = Property(name, roles_ | earlier.roles, alias.group(1) if alias else earlier.alias_of)
    # a name that is a property of its own in one table (enable.auto.commit) is no alias in the other
    return {name: Property(name, p.roles, None if name in not_aliases else p.alias_of) for name, p in found.items()}

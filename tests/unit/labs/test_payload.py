"""What a lab sends: the largest value Kafka can carry, bytes generated the same way every run and without
randbytes' limit, and nothing made before a run writes it."""

import itertools
import random
import tracemalloc
import zlib

import pytest

from kafkabench.config.client_settings import SIZE_LIMITS, ClientSettings, fit_payload
from kafkabench.core.events import SILENT
from kafkabench.errors import ConfigError
from kafkabench.labs import payload as payload_module
from kafkabench.labs.latency.scenario import LatencyScenario
from kafkabench.labs.latency.session import plan_latency
from kafkabench.labs.payload import MAX_VALUE_BYTES, Payload, check_value_size, file_sha256, generated_chunks
from kafkabench.labs.throughput.plan import plan_throughput
from kafkabench.labs.throughput.scenario import ProduceScenario

INT32_MAX = 2**31 - 1


def test_the_largest_value_gets_size_limits_kafka_takes_and_one_more_byte_is_refused():
    settings = ClientSettings()
    fit_payload(settings, check_value_size(MAX_VALUE_BYTES))
    assert {int(settings.role(role)[key].value) for role, key in SIZE_LIMITS} == {INT32_MAX}
    with pytest.raises(ValueError, match=r"^must be at most 2147482623 bytes: Kafka's record sizes are 32-bit"):
        check_value_size(MAX_VALUE_BYTES + 1)


@pytest.mark.parametrize("size", [1, 3, 8, 9, 31, 32, 33, 1000])
def test_generated_bytes_are_randbytes_of_the_whole_size_whatever_the_pieces(monkeypatch, size):
    monkeypatch.setattr(payload_module, "CHUNK_BYTES", 8)  # many pieces, a short last one
    pieces = list(generated_chunks(size, seed=size))
    assert all(len(piece) <= 8 for piece in pieces)
    assert b"".join(pieces) == random.Random(size).randbytes(size)  # the bytes earlier versions sent


def test_a_value_beyond_randbytes_limit_is_made_piece_by_piece():
    size = 2**28 + 5  # 256 MiB and more: random.randbytes alone overflows (its bit count is a C int)
    first, second = itertools.islice(generated_chunks(size, seed=1), 2)
    assert len(first) == len(second) == payload_module.CHUNK_BYTES
    assert first + second == random.Random(1).randbytes(2 * payload_module.CHUNK_BYTES)


def test_a_written_payload_is_the_same_every_run_incompressible_and_its_hash_is_the_files(tmp_path):
    for name in ("a", "b"):
        Payload.generated(100_000, seed=7).write(tmp_path / name)
    Payload.generated(100_000, seed=8).write(tmp_path / "other")
    a = (tmp_path / "a").read_bytes()
    assert a == (tmp_path / "b").read_bytes() != (tmp_path / "other").read_bytes() and len(a) == 100_000
    assert len(zlib.compress(a)) > 99_000
    assert file_sha256(tmp_path / "a") == file_sha256(tmp_path / "b")


def test_a_payload_file_is_checked_without_reading_it_and_copied_when_written(tmp_path):
    source = tmp_path / "image.jpg"
    source.write_bytes(b"jpeg" * 1000)
    given = Payload.of_file(source)
    assert len(given) == 4000
    given.write(tmp_path / "copy")
    assert (tmp_path / "copy").read_bytes() == source.read_bytes()
    huge = tmp_path / "huge.bin"
    with huge.open("wb") as file:
        file.truncate(MAX_VALUE_BYTES + 1)  # sparse: nothing is written to the disk
    with pytest.raises(ConfigError, match=r"^payload file .*huge.bin has 2147482624 bytes; a value can have at most"):
        Payload.of_file(huge)
    with pytest.raises(ConfigError, match=r"^payload file .*nope.jpg does not exist$"):
        Payload.of_file(tmp_path / "nope.jpg")
    with pytest.raises(ConfigError, match=r"^payload file .* cannot be read: Is a directory$"):
        Payload.of_file(tmp_path)


def test_checking_a_run_of_the_largest_value_makes_none_of_it():
    tracemalloc.start()
    try:
        latency = plan_latency(LatencyScenario(size=MAX_VALUE_BYTES, clients=["tcp"]), SILENT)
        produce = plan_throughput(ProduceScenario(size=MAX_VALUE_BYTES, count=1, client="kafka-python"), SILENT)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert len(latency.payload) == len(produce.payloads[0]) == MAX_VALUE_BYTES
    assert peak < 50 * 2**20  # the plans, not the 2 GiB values

"""The compression lab on a real broker, small row counts."""

import pytest

from kafkabench.cluster import EmbeddedCluster
from kafkabench.cluster.target import Target
from kafkabench.core.events import Listener
from kafkabench.labs.compression.run import run_compression
from kafkabench.labs.compression.scenario import CompressionScenario

pytestmark = pytest.mark.integration


class Recorder(Listener):
    def __init__(self):
        self.cells = []

    def progress(self, done, total, label=""):
        if label == "cells":
            self.cells.append(done)


def target_of(cluster) -> Target:
    embedded = isinstance(cluster, EmbeddedCluster)
    return Target.embedded(cluster) if embedded else Target.external(cluster.bootstrap_servers)


# the suite runs each format with and without zstd and gzip (6 cells); make test-long every format with every codec
@pytest.mark.parametrize("codecs", [["none", "gzip", "zstd"], pytest.param(
    ["none", "gzip", "snappy", "lz4", "zstd"], marks=pytest.mark.long)], ids=["some", "every"])
def test_each_format_and_codec_completes_and_the_sizes_make_sense(kafka_cluster, tmp_path, codecs):
    listener = Recorder()
    document = run_compression(CompressionScenario(rows=3000, codecs=codecs), target_of(kafka_cluster), tmp_path,
                               listener)
    cells = {(run.params["format"], run.params["codec"]): run for run in document.runs}
    assert set(cells) == {(f, c) for f in ("json", "protobuf", "avro") for c in codecs}
    for run in document.runs:
        assert run.counters["rows"] == 3000 and run.counters["stored_bytes"] > 0
        assert run.counters["wire_bytes"] > 0 and run.resources["cpu_s"] > 0
        assert run.throughput["read_rows_per_s"] > 0  # every row was read back and decoded by the consumer
        assert run.throughput["records_per_s"] > 0 and run.throughput["payload_mb_per_s"] > 0
        if isinstance(kafka_cluster, EmbeddedCluster):
            assert run.resources["broker_cpu_s"] is not None
        assert run.config["topic"]["compression.type"] == ("uncompressed" if run.params["codec"] == "none" else run.params["codec"])
    stored = {key: run.counters["stored_bytes"] for key, run in cells.items()}
    assert stored[("json", "zstd")] < stored[("json", "none")] and stored[("json", "gzip")] < stored[("json", "none")]
    assert stored[("protobuf", "none")] < stored[("json", "none")]
    assert cells[("json", "none")].counters["payload_bytes"] > cells[("protobuf", "none")].counters["payload_bytes"]
    assert len(listener.cells) == 3 * len(codecs)


def test_levels_and_images_where_codecs_gain_almost_nothing(kafka_cluster, tmp_path):
    images = tmp_path / "images"
    images.mkdir()
    import random

    for index in range(40):  # already-compressed bytes, like JPEG data
        (images / f"{index}.jpg").write_bytes(random.Random(index).randbytes(5_000))
    request = CompressionScenario(rows=1000, codecs=["none", "zstd"], levels={"zstd": [1, 9]}, dataset=f"images {images}")
    document = run_compression(request, target_of(kafka_cluster), tmp_path / "out", Recorder())
    runs = {(r.params["codec"], r.params["level"]): r for r in document.runs}
    assert set(runs) == {("none", None), ("zstd", 1), ("zstd", 9)}
    assert runs[("zstd", 9)].config["topic"]["compression.zstd.level"] == "9"
    ratio = runs[("zstd", 1)].counters["stored_bytes"] / runs[("none", None)].counters["stored_bytes"]
    assert ratio > 0.95  # a codec gains almost nothing on compressed bytes
    assert runs[("none", None)].counters["rows"] == 40  # each file once, however many rows were asked for

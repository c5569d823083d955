import pytest

from kafkabench.config.properties import parse_overrides
from kafkabench.errors import ConfigError
from kafkabench.labs.compression.run import cell_settings, check_request
from kafkabench.labs.compression.scenario import CompressionScenario


def test_the_matrix_is_format_x_codec_x_level():
    _, cells = check_request(CompressionScenario(formats=["json", "avro"], codecs=["none", "zstd"], levels={"zstd": [1, 9]}))
    assert [c.label for c in cells] == ["json none", "json zstd 1", "json zstd 9", "avro none", "avro zstd 1", "avro zstd 9"]


def test_a_cell_sets_the_codec_on_producer_and_topic_and_lets_batches_fill():
    _, cells = check_request(CompressionScenario(formats=["json"], codecs=["none", "zstd"], levels={"zstd": [3]}))
    none, zstd = (cell_settings(cell, CompressionScenario(), 300) for cell in cells)
    assert none.values("topic")["compression.type"] == "uncompressed" and none.values("producer")["compression.type"] == "none"
    assert zstd.values("topic")["compression.zstd.level"] == "3" and zstd.values("producer")["compression.zstd.level"] == "3"
    assert zstd.values("producer")["linger.ms"] == "50"
    user = cell_settings(cells[1], CompressionScenario(overrides=parse_overrides(["linger.ms=3000"])), 300)
    assert user.values("producer")["linger.ms"] == "3000"  # the seed's 3 s, if asked for


@pytest.mark.parametrize(("request_", "message"), [
    (CompressionScenario(formats=["xml"]), "unknown format 'xml'"),
    (CompressionScenario(codecs=["brotli"]), "unknown codec 'brotli'"),
    (CompressionScenario(client="java"), "replays records files with a Python client"),
    (CompressionScenario(overrides=parse_overrides(["compresion.type=zstd"])), "did you mean compression.type"),
])
def test_bad_requests_fail_before_anything_runs(request_, message):
    with pytest.raises(ConfigError, match=message):
        check_request(request_)


def test_protobuf_for_csv_is_refused_early(tmp_path):
    path = tmp_path / "rows.csv"
    path.write_text("a,b\n1,2\n")
    with pytest.raises(ConfigError, match="protobuf format needs a schema"):
        check_request(CompressionScenario(dataset=str(path)))


def test_a_level_the_client_cannot_take_is_refused_early():
    with pytest.raises(ConfigError, match=r"rejects compression.zstd.level=19: .*outside allowed range"):
        check_request(CompressionScenario(codecs=["zstd"], levels={"zstd": [19]}))

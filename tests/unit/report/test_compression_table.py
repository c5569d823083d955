import pytest

from kafkabench.core.results import ResultDocument, Run
from kafkabench.errors import ConfigError
from kafkabench.labs.compression.scenario import parse_levels
from kafkabench.labs.compression.report import dominated, winners


def cell(fmt, codec, stored, duration, cpu, broker=None):
    return Run(client="confluent", scenario="compression", params={"format": fmt, "codec": codec, "level": None},
               counters={"stored_bytes": stored}, duration_s=duration, resources={"cpu_s": cpu, "broker_cpu_s": broker})


def test_pareto_front_marks_only_cells_beaten_everywhere():
    runs = [cell("json", "none", 100, 1.0, 1.0), cell("json", "zstd", 10, 1.2, 1.1), cell("json", "gzip", 11, 2.0, 1.9),
            cell("json", "lz4", 20, 0.9, 0.9)]
    # none loses to lz4 everywhere, gzip to zstd; zstd (smallest) and lz4 (fastest, cheapest) stay on the front
    assert dominated(runs) == {0, 2}
    doc = ResultDocument(lab="compression", created_at="t", runs=runs)
    assert winners(doc) == ["smallest: json zstd", "fastest: json lz4", "least CPU: json lz4"]


def test_broker_cpu_counts_where_known():
    runs = [cell("json", "none", 10, 1, 1.0, broker=5.0), cell("json", "zstd", 10, 1, 2.0, broker=1.0)]
    assert dominated(runs) == {0}


def test_levels():
    assert parse_levels(["zstd=1,3,19", "gzip=9"]) == {"zstd": [1, 3, 19], "gzip": [9]}
    with pytest.raises(ConfigError, match="CODEC one of gzip, lz4, zstd"):
        parse_levels(["snappy=1"])
    with pytest.raises(ConfigError, match="whole numbers"):
        parse_levels(["zstd=fast"])

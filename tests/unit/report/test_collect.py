import json

import pytest

from kafkabench.core.results import read_histogram, read_result
from kafkabench.errors import KafkabenchError
from kafkabench.report.collect import ReportError, collect, find_result_dirs
from kafkabench.labs.compression.report import dominated

from .results_factory import compression_result, latency_result, produce_result


def test_finds_result_directories_at_any_depth_in_a_stable_order(tmp_path):
    latency_result(tmp_path / "run" / "002-b-r1", {"tcp": 1.0})
    latency_result(tmp_path / "run" / "001-a-r1", {"tcp": 1.0})
    produce_result(tmp_path / "other" / "deep" / "produce")
    found = find_result_dirs([tmp_path])
    assert found == [tmp_path / "other" / "deep" / "produce", tmp_path / "run" / "001-a-r1", tmp_path / "run" / "002-b-r1"]
    assert find_result_dirs([tmp_path / "run" / "001-a-r1"]) == [tmp_path / "run" / "001-a-r1"]
    assert find_result_dirs([tmp_path / "run" / "001-a-r1" / "result.json"]) == [tmp_path / "run" / "001-a-r1"]
    # the same directory reached twice is one result
    assert len(find_result_dirs([tmp_path / "run", tmp_path / "run" / "001-a-r1"])) == 2


def test_nothing_found_and_missing_directories_are_one_line_errors(tmp_path):
    with pytest.raises(ReportError, match=r"no result\.json found under"):
        collect([tmp_path])
    with pytest.raises(ReportError, match="no such directory"):
        collect([tmp_path / "missing"])
    assert issubclass(ReportError, KafkabenchError)  # the CLI prints it as one line and exits 1


@pytest.mark.parametrize("content, message", [
    ("{not json", "cannot be read as JSON"),
    ('{"schema": "something/9", "lab": "latency"}', "not a kafkabench.result/1 result"),
    ('{"schema": "kafkabench.result/1", "lab": "latency", "created_at": "t", "runs": [{"client": "x"}]}',
     r"runs -> 0 -> scenario: Field required"),
])
def test_an_unreadable_result_is_an_error_naming_the_file(tmp_path, content, message):
    latency_result(tmp_path / "good", {"tcp": 1.0})
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "result.json").write_text(content)
    with pytest.raises(ReportError, match=message) as raised:
        collect([tmp_path])
    assert str(tmp_path / "bad" / "result.json") in str(raised.value)


def test_a_missing_histogram_is_an_error_naming_it(tmp_path):
    document = latency_result(tmp_path / "r", {"tcp": 1.0})
    (tmp_path / "r" / document.runs[0].histograms["e2e"]).unlink()
    with pytest.raises(ReportError, match=r"00-tcp-e2e\.hdr"):
        collect([tmp_path])


def test_plan_cells_in_run_order_with_their_repeats_together_then_by_creation_time(tmp_path):
    cell = lambda name, repeat: {"plan": "p", "cell": name, "scenario": name, "lab": "latency", "profile": "default", "repeat": repeat}
    latency_result(tmp_path / "003-a-r2", {"tcp": 1.0}, "2026-01-01T10:03:00+00:00", cell("a", 2))
    latency_result(tmp_path / "002-b-r1", {"tcp": 1.0}, "2026-01-01T10:02:00+00:00", cell("b", 1))
    latency_result(tmp_path / "001-a-r1", {"tcp": 1.0}, "2026-01-01T10:01:00+00:00", cell("a", 1))
    latency_result(tmp_path / "zz-alone", {"tcp": 1.0}, "2026-01-01T09:00:00+00:00")
    data = collect([tmp_path])
    assert [r["name"] for r in data["results"]] == ["zz-alone", "a r1", "a r2", "b r1"]
    assert [r["id"] for r in data["results"]] == ["r1", "r2", "r3", "r4"]


def test_same_names_are_told_apart_by_their_directory(tmp_path):
    latency_result(tmp_path / "x" / "latency", {"tcp": 1.0}, "2026-01-01T10:00:00+00:00")
    latency_result(tmp_path / "y" / "latency", {"tcp": 1.0}, "2026-01-01T11:00:00+00:00")
    names = [r["name"] for r in collect([tmp_path])["results"]]
    assert names == [str(tmp_path / "x" / "latency"), str(tmp_path / "y" / "latency")]


def test_the_data_dict_is_plain_json_with_the_result_numbers_unrounded(tmp_path):
    document = latency_result(tmp_path / "lat", {"tcp": 1.0, "confluent": 6.0})
    produce_result(tmp_path / "prod")
    data = collect([tmp_path])
    assert json.loads(json.dumps(data)) == data
    latency = data["results"][0]
    assert latency["lab"] == "latency" and latency["floor_p50_ms"] == document.runs[0].stats["e2e"].p50_ms
    for entry, run in zip(latency["runs"], document.runs):
        assert entry["stats"] == {metric: stat.model_dump() for metric, stat in run.stats.items()}
        assert set(entry["spectra"]) == {"e2e", "produce", "consume"}  # cold is one value, not a distribution
    assert latency["headline"].startswith("e2e p50 tcp")
    assert data["results"][1]["lines"] == ["produce: wire bytes 3,900,000 for 3,000,000 payload bytes (1.30x)",
                                           "consume: first_record_s 0.010, rebalance_s 0.200"]
    assert {d["key"] for d in data["definitions"]} >= {"e2e", "publish_delay", "stored_bytes", "out_of_range"}


def test_spectra_end_at_the_maximum_of_the_decoded_histogram(tmp_path):
    latency_result(tmp_path / "lat", {"tcp": 1.0, "confluent": 6.0})
    data = collect([tmp_path])
    stored = read_result(tmp_path / "lat")
    for entry, run in zip(data["results"][0]["runs"], stored.runs):
        for metric, spectrum in entry["spectra"].items():
            assert spectrum["value_ms"][-1] == run.stats[metric].max_ms
            assert read_histogram(tmp_path / "lat", run, metric).count == run.stats[metric].count


def test_environment_lists_each_distinct_value_with_its_results(tmp_path):
    latency_result(tmp_path / "a", {"tcp": 1.0, "confluent": 6.0}, "2026-01-01T10:00:00+00:00")
    compression_result(tmp_path / "b", "2026-01-01T11:00:00+00:00")
    environment = collect([tmp_path])["environment"]
    assert environment["tools"] == [{"value": {"name": "kafkabench", "version": "0.1.0"}, "results": ["r1", "r2"]}]
    assert environment["kafka_versions"] == [{"value": {"kafka_version": "4.1.2"}, "results": ["r1", "r2"]}]
    assert environment["machines"][0]["value"]["cores"] == 8
    clients = [(e["value"]["client"], e["value"]["version"], e["results"]) for e in environment["clients"]]
    assert clients == [("tcp", "tcp 1.0", ["r1"]), ("confluent", "confluent 1.0", ["r1"]), ("confluent", "", ["r2"])]


def test_compression_cells_are_marked_as_the_terminal_table_marks_them(tmp_path):
    document = compression_result(tmp_path / "c")
    result = collect([tmp_path])["results"][0]
    worse = dominated(document.runs)
    assert [run["pareto"] for run in result["runs"]] == ["dominated" if i in worse else "front" for i in range(len(document.runs))]
    assert result["runs"][1]["label"] == "json zstd 3"
    assert result["runs"][0]["objectives"] == {"stored_bytes": 1_567_428, "duration_s": 0.082, "cpu_s": 0.045 + 0.040}
    assert result["lines"] == ["smallest: json zstd 3", "fastest: avro lz4", "least CPU: json zstd 3"]


def test_a_plan_run_that_stopped_early_names_the_cells_without_a_result(tmp_path):
    latency_result(tmp_path / "run" / "001-latency-default-r1", {"tcp": 1.0})
    cells = [{"index": 1, "name": "latency-default", "directory": "001-latency-default-r1", "status": "ok", "error": None},
             {"index": 2, "name": "produce-default", "directory": "002-produce-default-r1", "status": "failed",
              "error": "the broker stopped answering"},
             {"index": 3, "name": "consume-default", "directory": "003-consume-default-r1", "status": "not run", "error": None}]
    (tmp_path / "run" / "run.json").write_text(json.dumps({"schema": "kafkabench.run/1", "plan": "quick", "cells": cells}))
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "run.json").write_text('{"someone": "else"}')  # not ours: not judged
    [plan_run] = collect([tmp_path])["plan_runs"]
    assert (plan_run["plan"], plan_run["cells"]) == ("quick", 3)
    assert [(c["directory"], c["status"], c["error"]) for c in plan_run["incomplete"]] == [
        ("002-produce-default-r1", "failed", "the broker stopped answering"), ("003-consume-default-r1", "not run", None)]

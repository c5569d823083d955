import csv
import io
import json

from kafkabench.report import csv_export
from kafkabench.report.collect import collect

from .results_factory import compression_result, latency_result, produce_result


def read(text):
    return list(csv.DictReader(io.StringIO(text)))


def test_one_row_per_run_with_the_union_of_columns_in_a_stable_order(tmp_path):
    latency_result(tmp_path / "lat", {"tcp": 1.0, "confluent": 6.0}, "2026-01-01T10:00:00+00:00")
    produce_result(tmp_path / "prod", "2026-01-01T11:00:00+00:00")
    compression_result(tmp_path / "comp", "2026-01-01T12:00:00+00:00")
    data = collect([tmp_path])
    columns, rows = csv_export.table(data)
    assert len(rows) == 2 + 2 + 5
    assert columns[:len(csv_export.FIXED)] == list(csv_export.FIXED)
    stats = [c for c in columns if c.startswith("stats.")]
    assert [c.split(".")[1] for c in stats][::8] == ["e2e", "produce", "consume", "cold", "publish_latency", "publish_delay"]
    assert stats[:8] == [f"stats.e2e.{f}" for f in ("count", "mean_ms", "p50_ms", "p90_ms", "p99_ms", "p999_ms", "max_ms", "min_ms")]
    groups = [c.split(".")[0] for c in columns[len(csv_export.FIXED):]]
    assert groups == sorted(groups, key=csv_export.GROUPS.index)  # params, stats, throughput, counters, resources, timings
    assert {"counters.errors.KafkaTimeoutError", "counters.stored_bytes", "timings.rebalance_s", "params.level"} <= set(columns)
    assert csv_export.table(collect([tmp_path]))[0] == columns  # the same results, the same columns


def test_values_are_exact_and_missing_ones_empty(tmp_path):
    document = latency_result(tmp_path / "lat", {"tcp": 1.0}, "2026-01-01T10:00:00+00:00")
    produce = produce_result(tmp_path / "prod", "2026-01-01T11:00:00+00:00")
    compression_result(tmp_path / "comp", "2026-01-01T12:00:00+00:00")
    rows = read(csv_export.to_csv(collect([tmp_path])))
    tcp, producer, consumer, json_none = rows[:4]
    assert tcp["result_dir"] == str(tmp_path / "lat") and tcp["lab"] == "latency" and tcp["client"] == "tcp"
    assert float(tcp["stats.e2e.p99_ms"]) == document.runs[0].stats["e2e"].p99_ms
    assert float(tcp["stats.e2e.mean_ms"]) == document.runs[0].stats["e2e"].mean_ms  # not rounded
    assert tcp["stats.publish_latency.p50_ms"] == "" and tcp["counters.stored_bytes"] == ""
    assert float(producer["throughput.records_per_s"]) == produce.runs[0].throughput["records_per_s"]
    assert producer["counters.errors.KafkaTimeoutError"] == "2" and producer["scenario"] == "produce"
    assert consumer["timings.rebalance_s"] == "0.2"
    assert json_none["params.level"] == "" and json_none["resources.broker_cpu_s"] == "0.04"
    assert rows[4]["params.level"] == "3"  # json zstd 3


def test_plan_columns_and_nested_values(tmp_path):
    plan = {"plan": "seed-000", "cell": "latency-default", "profile": "default", "repeat": 2}
    latency_result(tmp_path / "lat", {"tcp": 1.0}, plan=plan)
    compression_result(tmp_path / "comp")
    rows = read(csv_export.to_csv(collect([tmp_path])))
    assert (rows[0]["plan"], rows[0]["plan_cell"], rows[0]["plan_profile"], rows[0]["plan_repeat"]) == \
        ("seed-000", "latency-default", "default", "2")
    assert rows[-1]["plan"] == ""
    data = collect([tmp_path])
    data["results"][0]["runs"][0]["params"]["nested"] = {"b": 1, "a": [1, 2]}
    assert json.loads(read(csv_export.to_csv(data))[0]["params.nested"]) == {"a": [1, 2], "b": 1}

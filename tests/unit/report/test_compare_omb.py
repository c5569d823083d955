"""`compare` with a published OpenMessaging Benchmark run as the baseline: OMB's result files on both sides, matched
on OMB's workload name, with the noise test where both sides have repeats."""

import json

from kafkabench.report.omb import compare_omb, is_omb_baseline


def omb_result(workload: str, driver: str, rate: float, p99: float) -> dict:
    return {"workload": workload, "driver": driver, "publishRate": [rate, rate * 1.01], "consumeRate": [rate] * 2,
            "publishErrorRate": [0.0, 0.0], "aggregatedPublishLatency50pct": p99 / 4,
            "aggregatedPublishLatency99pct": p99, "aggregatedPublishDelayLatency99pct": 300,
            "aggregatedEndToEndLatency50pct": p99 / 3, "aggregatedEndToEndLatency99pct": p99 * 1.2}


def write(directory, results: list[dict]) -> None:
    directory.mkdir(parents=True)
    for index, result in enumerate(results):
        stem = result["workload"].replace(" / ", "-").replace(" ", "-")
        (directory / f"{stem}-{result['driver']}-2026-11-29-10-00-{index:02d}.json").write_text(
            json.dumps(result))


def test_a_published_omb_run_is_the_baseline_of_kafkabench_s_omb_results(tmp_path):
    write(tmp_path / "published", [omb_result("1 topic / 16 partitions / 1kb", "Kafka", 50_000 + i, 9.0 + i / 10)
                                   for i in range(8)] + [omb_result("only there", "Kafka", 1, 1)])
    write(tmp_path / "mine" / "nested", [omb_result("1 topic / 16 partitions / 1kb", "Kafka-java", 50_000 + i,
                                                    4.0 + i / 10) for i in range(8)])
    (tmp_path / "mine" / "result.json").write_text("{}")  # kafkabench's own result beside them is not read here
    assert is_omb_baseline(tmp_path / "published") and not is_omb_baseline(tmp_path / "mine")
    comparison = compare_omb(tmp_path / "published", tmp_path / "mine", 5, 0.05)
    [run] = comparison.matched
    assert run.label == "1 topic / 16 partitions / 1kb (Kafka -> Kafka-java)"
    assert (run.a_samples, run.b_samples) == (8, 8)
    changes = {change.metric: change for change in run.metrics}
    # 9.35 -> 4.35 ms: 8 repeats a side can decide 6 tests
    assert changes["aggregatedPublishLatency99pct"].verdict == "improvement"
    assert changes["publishRate"].verdict == "within noise"
    assert "OMB's from the record's millisecond timestamp" in run.note
    assert comparison.only_a == ["only there (1 in A)"]
    single = compare_omb(sorted((tmp_path / "published").iterdir())[0], tmp_path / "mine", 5, 0.05,
                         metrics=["aggregated*99pct"])
    assert {c.metric for c in single.matched[0].metrics} == {
        "aggregatedPublishLatency99pct", "aggregatedPublishDelayLatency99pct", "aggregatedEndToEndLatency99pct"}
    assert all(c.verdict == "noise unknown" for c in single.matched[0].metrics)  # one file: no noise test

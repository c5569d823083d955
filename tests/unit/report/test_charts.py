import math

import pytest

from kafkabench.report import charts, html
from kafkabench.report.collect import collect
from kafkabench.report.spectrum import axis_position

from .results_factory import compression_result, latency_result, produce_result


def by_kind(result):
    return {chart["chart"]: chart for chart in html.result_charts(result)}


@pytest.fixture
def latency(tmp_path):
    document = latency_result(tmp_path / "lat", {"confluent": 6.0, "tcp": 1.0, "java": 12.0})
    return document, collect([tmp_path])["results"][0]


def test_latency_charts_carry_the_exact_stats(latency):
    document, result = latency
    kinds = by_kind(result)
    assert list(kinds) == ["latency-spectrum", "latency-bars", "latency-split"]
    ordered = sorted(document.runs, key=lambda run: run.stats["e2e"].p50_ms)

    bars = kinds["latency-bars"]["figure"]
    p50, p99 = bars["data"]
    assert p50["x"] == [run.client for run in ordered] == ["tcp", "confluent", "java"]
    assert p50["y"] == [run.stats["e2e"].p50_ms for run in ordered]
    assert p99["y"] == [run.stats["e2e"].p99_ms for run in ordered]
    [floor] = bars["layout"]["shapes"]
    assert floor["y0"] == floor["y1"] == document.runs[1].stats["e2e"].p50_ms  # the tcp client's e2e p50
    assert bars["layout"]["yaxis"].get("type", "linear") == "linear"  # 1 .. ~25 ms: no need for a log axis

    produce, consume, e2e = kinds["latency-split"]["figure"]["data"]
    assert produce["y"] == [run.stats["produce"].p50_ms for run in ordered]
    assert consume["y"] == [run.stats["consume"].p50_ms for run in ordered]
    assert e2e["y"] == [run.stats["e2e"].p50_ms for run in ordered]
    assert kinds["latency-split"]["figure"]["layout"]["barmode"] == "stack"
    assert "need not add up" in kinds["latency-split"]["caption"]


def test_the_spectrum_is_the_decoded_histograms_with_their_maximum(latency):
    document, result = latency
    traces = by_kind(result)["latency-spectrum"]["figure"]["data"]
    assert [t["name"] for t in traces if t["visible"]] == ["confluent e2e", "tcp e2e", "java e2e"]
    assert {t["name"] for t in traces if not t["visible"]} == {
        f"{c} {m}" for c in ("confluent", "tcp", "java") for m in ("produce", "consume")}
    [menu] = by_kind(result)["latency-spectrum"]["figure"]["layout"]["updatemenus"]
    shown = {button["label"]: button["args"][0]["visible"] for button in menu["buttons"]}
    assert shown["produce"] == [t["meta"]["metric"] == "produce" for t in traces]  # one metric at a time
    for trace in traces:
        run = document.runs[trace["meta"]["run"]]
        spectrum = result["runs"][trace["meta"]["run"]]["spectra"][trace["meta"]["metric"]]
        assert trace["y"] == spectrum["value_ms"] and trace["customdata"] == spectrum["percentile"]
        assert trace["x"] == [axis_position(p) for p in spectrum["percentile"]]
        assert trace["y"][-1] == run.stats[trace["meta"]["metric"]].max_ms
        assert trace["line"]["shape"] == "hv"
    layout = by_kind(result)["latency-spectrum"]["figure"]["layout"]
    assert layout["xaxis"]["type"] == "log" and layout["yaxis"]["type"] == "log"
    assert layout["xaxis"]["ticktext"][:4] == ["0%", "50%", "90%", "99%"] and layout["xaxis"]["tickvals"][:4] == [1, 2, 10, 100]


def test_without_a_tcp_run_there_is_no_floor_line_and_a_wide_spread_gets_a_log_axis(tmp_path):
    latency_result(tmp_path / "lat", {"confluent": 6.0, "kafka-python": 250.0})
    bars = by_kind(collect([tmp_path])["results"][0])["latency-bars"]["figure"]
    assert "shapes" not in bars["layout"]
    assert bars["layout"]["yaxis"]["type"] == "log"


def test_the_floor_label_sits_on_the_line_of_a_log_axis(tmp_path):
    document = latency_result(tmp_path / "lat", {"tcp": 1.5, "kafka-python": 250.0})
    layout = by_kind(collect([tmp_path])["results"][0])["latency-bars"]["figure"]["layout"]
    floor = document.runs[0].stats["e2e"].p50_ms
    assert layout["shapes"][0]["y0"] == floor
    assert layout["annotations"][0]["y"] == pytest.approx(math.log10(floor))  # annotations take log10 units there


def test_throughput_timeline_and_spectra(tmp_path):
    document = produce_result(tmp_path / "p")
    kinds = by_kind(collect([tmp_path])["results"][0])
    assert list(kinds) == ["latency-spectrum", "throughput-timeline"]
    traces = kinds["throughput-timeline"]["figure"]["data"]
    producer = document.runs[0]
    rate, p99, consumer_rate = traces  # the consumer's windows have no p99: no trace for it
    assert rate["x"] == [w["t_s"] for w in producer.timeline]
    assert rate["y"] == [w["records_per_s"] for w in producer.timeline]
    assert p99["y"] == [w["p99_ms"] for w in producer.timeline] and p99["yaxis"] == "y2"
    assert consumer_rate["y"] == [w["records_per_s"] for w in document.runs[1].timeline]
    names = [t["name"] for t in kinds["latency-spectrum"]["figure"]["data"]]
    assert names == ["produce confluent publish_latency", "produce confluent publish_delay", "consume confluent e2e"]


def test_pareto_points_are_stored_mb_against_duration_front_apart_from_dominated(tmp_path):
    document = compression_result(tmp_path / "c")
    result = collect([tmp_path])["results"][0]
    kinds = by_kind(result)
    assert list(kinds) == ["compression-pareto"]
    front, worse = kinds["compression-pareto"]["figure"]["data"]
    assert (front["meta"]["pareto"], worse["meta"]["pareto"]) == ("front", "dominated")
    assert front["marker"]["symbol"] != worse["marker"]["symbol"]
    for trace in (front, worse):
        runs = [document.runs[i] for i in trace["meta"]["runs"]]
        assert trace["x"] == [run.duration_s for run in runs]
        assert trace["y"] == [run.counters["stored_bytes"] / 1e6 for run in runs]
        assert trace["marker"]["color"] == [run.resources["cpu_s"] + run.resources["broker_cpu_s"] for run in runs]
        assert [c[0] for c in trace["customdata"]] == [run.counters["stored_bytes"] for run in runs]
    assert {result["runs"][i]["label"] for i in worse["meta"]["runs"]} == {"json gzip", "avro none"}
    assert "json zstd 3" in front["text"]


def test_summary_charts_compare_results_of_one_lab(tmp_path):
    latency_result(tmp_path / "a", {"tcp": 1.0, "confluent": 6.0}, "2026-01-01T10:00:00+00:00")
    latency_result(tmp_path / "b", {"confluent": 7.0}, "2026-01-01T11:00:00+00:00")
    produce_result(tmp_path / "p")
    data = collect([tmp_path])
    [summary] = html.summary_charts(data["results"])
    assert summary["chart"] == "latency-summary" and summary["result"] == "summary"
    tcp, confluent = summary["figure"]["data"]
    assert tcp["x"] == ["a", "b"]
    assert tcp["y"] == [data["results"][0]["runs"][0]["stats"]["e2e"]["p50_ms"], None]
    assert confluent["y"] == [data["results"][0]["runs"][1]["stats"]["e2e"]["p50_ms"],
                              data["results"][1]["runs"][0]["stats"]["e2e"]["p50_ms"]]


def test_log_ticks_are_one_two_five():
    assert charts.log_ticks([0.9, 31.0]) == {"type": "log", "tickvals": [0.5, 1, 2, 5, 10, 20, 50],
                                             "ticktext": ["0.5", "1", "2", "5", "10", "20", "50"]}

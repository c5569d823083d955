import csv
import io
import json
import re
import statistics

import pytest

from kafkabench.labs.durability import report
from kafkabench.report import csv_export
from kafkabench.report.collect import collect
from kafkabench.report.significance import median_interval
from kafkabench.report.html import render_html, result_charts
from kafkabench.report.table import ms
from tests.unit.report.results_factory import (DURABILITY_CELLS, availability_group, availability_step,
                                               durability_availability, durability_result)

CELL_PARAMS = ("cell", "repeat", "replication_factor", "min_insync_replicas", "effective_min_isr", "acks", "idempotence")


def _key(cell) -> str:
    return cell.label.removesuffix(f" {cell.client}") if cell.produce else cell.label


def rows(document):
    """Each cell's row of the cells table, by its label (without the client), column name -> cell."""
    table = report.cells_table(document)
    names = [column.name for column in table.columns]
    return {_key(cell): dict(zip(names, row.cells)) for cell, row in zip(report.summarize(document), table.rows)}


def kinds(document):
    return {_key(cell): row.kind for cell, row in zip(report.summarize(document), report.cells_table(document).rows)}


@pytest.fixture(scope="module")
def probed(tmp_path_factory):
    """(root directory, document): four cells, three repeats, one refused cell, one failed repeat, availability."""
    root = tmp_path_factory.mktemp("durability")
    return root, durability_result(root / "d", availability=durability_availability())


@pytest.fixture(scope="module")
def chart(probed):
    root, _ = probed
    result = collect([root])["results"][0]
    return result, {c["chart"]: c for c in result_charts(result)}["durability-cost"]


def with_availability(tmp_path, change):
    availability = durability_availability()
    change(availability)
    return durability_result(tmp_path / "d", availability=availability)


# ---- the interval ----

def test_a_single_samples_median_interval_is_seeded_and_absent_for_one_value():
    assert median_interval([]) is None and median_interval([51_000.0]) is None
    assert median_interval([110.0, 100.0, 130.0]) == (100.0, 130.0)  # 3 repeats: a resample's median is often an end
    many = [float(v) for v in range(100, 120)]
    low, high = median_interval(many)
    assert 100 < low < statistics.median(many) < high < 119
    assert median_interval(many) == (low, high)  # seeded: the same repeats, the same interval
    narrow = median_interval(many, confidence=0.5)
    assert low <= narrow[0] and narrow[1] <= high and narrow[1] - narrow[0] < high - low


# ---- the cells table ----

def test_the_cells_table_gives_medians_with_their_intervals_not_a_range(probed):
    _, document = probed
    table = report.cells_table(document)
    names = [column.name for column in table.columns]
    assert names[:7] == ["cell", "partitions", "RF", "min ISR", "acks", "idem", "client"]  # each differs between cells
    assert "range" not in names and names[7:9] == ["records/s", "records/s CI"] and names[12:14] == ["publish p99", "p99 CI"]
    assert "95 % bootstrap interval" in table.title
    found = rows(document)
    yolo = found["yolo"]
    assert (yolo["records/s"], yolo["records/s CI"], yolo["publish p99"], yolo["p99 CI"], yolo["n"]) == (
        "51,000", "50,000..52,000", "2.20", "2.00..2.40", "3")
    assert yolo["vs fastest"] == "fastest" and yolo["min ISR"] == "1"
    durable = found["durable"]  # repeat 2 failed: its 1,000 records/s and 80 ms p99 are not samples
    assert (durable["records/s"], durable["records/s CI"], durable["publish p99"], durable["p99 CI"], durable["n"]) == (
        "29,750", "29,500..30,000", "10.50", "9.00..12.00", "2")
    assert durable["min ISR"] == "2" and durable["vs fastest"] == "(-42 %)"  # 2 vs 3 repeats: no verdict
    assert durable["why"].startswith("3 vs 2 repeats cannot reach q < 0.05 among 3 tests")  # the table's 3 comparisons
    assert any(line.startswith("vs fastest: 3 tests: at a raw p < 0.05, chance alone would mark 0.2")
               for line in report.lines(document))
    assert found["p1 rf1 isr2 acks=all idem=off"]["min ISR"] == "1 (capped)"
    refused = found["p2 rf3 isr2 acks=1 idem=on java"]
    assert kinds(document)["p2 rf3 isr2 acks=1 idem=on java"] == "error" and refused["cell"] == "p2 rf3 isr2 acks=1 idem=on java"
    assert {refused[name] for name in report.NAMES if name != "n"} == {"-"} and refused["n"] == "0"


def test_with_more_repeats_the_interval_is_narrower_than_the_range(tmp_path):
    rates = (50_000.0, 58_000.0, 51_000.0, 49_000.0, 52_500.0, 50_500.0, 47_000.0, 51_500.0, 49_500.0)
    p99s = (2.0, 2.1, 2.3, 1.9, 6.0, 2.2, 2.05, 2.15, 1.5)
    cells = {label: (*cell[:5], rates, p99s) for label, cell in DURABILITY_CELLS.items()}
    yolo = rows(durability_result(tmp_path / "d", cells=cells, repeats=9, failed=None))["yolo"]
    assert yolo["records/s"] == "50,500" and yolo["publish p99"] == "2.10" and yolo["n"] == "9"
    records_low, records_high = median_interval(list(rates))
    assert 47_000 < records_low <= 50_500 <= records_high < 58_000
    assert yolo["records/s CI"] == f"{records_low:,.0f}..{records_high:,.0f}"
    p99_low, p99_high = median_interval(list(p99s))
    assert 1.5 < p99_low and p99_high < 6.0 and yolo["p99 CI"] == f"{ms(p99_low)}..{ms(p99_high)}"


def test_one_repeat_has_no_interval(tmp_path):
    document = durability_result(tmp_path / "d", repeats=1, failed=None)
    found = rows(document)
    assert found["yolo"]["records/s"] == "50,000" and found["yolo"]["publish p99"] == "2.00"
    assert {cell["records/s CI"] for cell in found.values()} == {"-"}
    assert {cell["p99 CI"] for cell in found.values()} == {"-"}
    points = report.chart_cells(document)
    assert [p["records_per_s_ci"] for p in points] == [None] * 4 and [p["publish_p99_ms_ci"] for p in points] == [None] * 4
    collected = collect([tmp_path])["results"][0]
    [trace] = {c["chart"]: c for c in result_charts(collected)}["durability-cost"]["figure"]["data"]
    assert trace["error_y"]["array"] == [None] * 4 and trace["error_x"]["arrayminus"] == [None] * 4


# ---- the availability table ----

def test_the_availability_table_has_one_row_per_step_and_says_what_was_done(probed):
    _, document = probed
    cells_table, table = report.tables(document)
    assert cells_table.title.startswith("durability:")
    assert table.title.startswith("availability per distinct RF / min.insync / acks, on a one-partition topic, probed "
                                  "with confluent: one follower down, then two brokers; paused (SIGSTOP) then killed (kill -9)")
    assert [column.name for column in table.columns] == report.AVAILABILITY_NAMES
    cells = [row.cells for row in table.rows]
    assert len(cells) == 1 + 4 + 4
    assert cells[0] == ["2", "1", "1", "-", "probe failed", *["-"] * 7] and table.rows[0].kind == "error"
    assert cells[2] == ["3", "1", "1", "paused followers 3, 2", "accepted", "-", "0.20", "-", "9.10", "yes",
                        "500 of 500 in 0.40 s", "1 (leader 1)"]
    assert cells[6] == ["3", "2", "all", "paused followers 3, 2", "refused", "NOT_ENOUGH_REPLICAS in 3.20 ms", "30.10",
                        "-", "9.10", "yes", "480 of 480 in 0.40 s", "1 (leader 1)"]
    assert cells[8] == ["3", "2", "all", "killed follower 2 and leader 1", "refused", "NOT_ENOUGH_REPLICAS in 2.50 ms",
                        "8.80", "-", "9.10", "yes", "480 of 480 in 6.10 s", "3 (leader 3)"]


def test_unanswered_mixed_and_unread_steps_are_worded(tmp_path):
    def change(groups):
        steps = groups[2]["steps"]
        steps[1].update(writes="no answer", acked=0, errors={}, refusal=None, refused_in_ms=None, stall_s=None,
                        leader=None, isr=[1], reads={"ok": False, "records": 0, "of": 480, "seconds": 30.0},
                        liveness={"longest_stall_s": 30.0, "stalls": 1, "began_s": 0.0, "ended_s": 30.0,
                                  "ended": "stuck"})
        steps[0].update(liveness={"longest_stall_s": 0.0, "stalls": 0})
        steps[2].update(isr=None, reads={"ok": False, "records": 0, "of": None, "seconds": 5.0, "error": "timed out"})
        steps[3].update(writes="mixed", acked=470, errors={"NOT_ENOUGH_REPLICAS": 20}, unanswered=10)
        groups[1].update(min_isr=4, effective_min_isr=3)  # capped by 3 replicas

    table = report.availability_table(with_availability(tmp_path, change))
    cells = [row.cells for row in table.rows]
    assert cells[6][3:] == ["paused followers 3, 2", "no answer", "-", "-", "30.0 stuck", "9.10", "no",
                            "0 of 480 in 30.00 s", "1 (no leader)"]
    assert cells[5][7] == "0"  # no stall of a second or more: acknowledgements went on
    assert cells[7][9:] == ["no", "in 5.00 s", "- (leader 1)"]  # the high watermark and the ISR never seen
    assert cells[8][4:6] == ["mixed", "470 of 500 acked, 20 NOT_ENOUGH_REPLICAS, 10 unanswered"]
    assert cells[1][1] == "3 (capped)"


def test_the_title_orders_what_went_down_by_how_many_whatever_group_comes_first(tmp_path):
    def single_replica_first(groups):
        step = availability_step("pause", "two brokers", [1, 2], "leader 1 and other broker 2", "no answer")
        groups.insert(0, availability_group(1, 1, "1", ["p1 rf1 isr1 acks=1 idem=off confluent"], [step]))

    table = report.availability_table(with_availability(tmp_path, single_replica_first))
    assert "probed with confluent: one follower down, then two brokers; paused (SIGSTOP) then killed" in table.title


def test_without_availability_there_is_only_the_cells_table(tmp_path):
    document = durability_result(tmp_path / "d")
    assert [t.title.split(":")[0] for t in report.tables(document)] == ["durability"]
    assert report.availability_table(document) is None
    assert not any(line.startswith("availability") for line in report.lines(document))


# ---- lines and headline ----

def test_lines_name_each_failed_probe_and_each_failure_once(probed):
    _, document = probed
    lines = report.lines(document)
    assert "availability of rf2 isr1 acks=1: the probe failed: broker 2 did not stop within 30 s" in lines
    assert lines.count("durable confluent repeat 2: no progress for 60 s") == 1  # its produce and consume run
    assert sum(line.startswith("availability") for line in lines) == 1


def test_the_headline_adds_what_the_most_durable_settings_did_with_two_brokers_down(probed):
    _, document = probed
    assert report.headline(document) == ("yolo confluent is fastest; durable confluent costs 42 % of its records/s "
                                         "(cannot decide); rf3 isr2 acks=all refuses writes with two brokers down")


def test_the_headline_says_what_happened_not_what_should(tmp_path):
    def accepted(groups):
        for step in groups[2]["steps"]:
            step.update(writes="accepted", acked=500, errors={}, refusal=None)

    headline = report.headline(with_availability(tmp_path / "a", accepted))
    assert headline.endswith("; rf3 isr2 acks=all accepts writes with two brokers down") and "refuses" not in headline

    def unanswered_when_paused(groups):
        groups[2]["steps"][1].update(writes="no answer", acked=0, refusal=None)

    assert report.headline(with_availability(tmp_path / "b", unanswered_when_paused)).endswith(
        "; rf3 isr2 acks=all leaves writes unanswered with two brokers paused and refuses writes with two brokers killed")

    def kill_failed(groups):
        groups[2].update(steps=groups[2]["steps"][:2], error="kill: broker 3 did not stop within 30 s")

    assert report.headline(with_availability(tmp_path / "e", kill_failed)).endswith(
        "; rf3 isr2 acks=all refuses writes with two brokers paused")

    def none_probed(groups):
        for group in groups:
            group.update(steps=[], error="no fault injection on this cluster")

    assert report.headline(with_availability(tmp_path / "c", none_probed)) == (
        "yolo confluent is fastest; durable confluent costs 42 % of its records/s (cannot decide)")
    assert "acks" not in report.headline(durability_result(tmp_path / "d"))


# ---- the chart ----

def test_chart_points_are_the_tables_medians_and_intervals(probed, chart):
    _, document = probed
    result, drawn = chart
    table = rows(document)
    points = 0
    for trace in drawn["figure"]["data"]:
        assert trace["text"] == trace["meta"]["cells"]
        for i, label in enumerate(trace["text"]):
            produced = [document.runs[index] for index in trace["meta"]["runs"][i]]
            assert {run.params["cell"] for run in produced} == {label} and not any(run.error for run in produced)
            rates = [run.throughput["records_per_s"] for run in produced]
            p99s = [run.stats["publish_latency"].p99_ms for run in produced]
            x, y = trace["x"][i], trace["y"][i]
            assert (x, y) == (statistics.median(p99s), statistics.median(rates))
            row = table[label.removesuffix(" confluent")]
            assert (report.rate_text(y), ms(x)) == (row["records/s"], row["publish p99"])
            low, high = median_interval(rates)
            assert (y - trace["error_y"]["arrayminus"][i], y + trace["error_y"]["array"][i]) == pytest.approx((low, high))
            assert f"{report.rate_text(low)}..{report.rate_text(high)}" == row["records/s CI"] == trace["customdata"][i][0]
            low, high = median_interval(p99s)
            assert (x - trace["error_x"]["arrayminus"][i], x + trace["error_x"]["array"][i]) == pytest.approx((low, high))
            assert f"{ms(low)}..{ms(high)}" == row["p99 CI"] == trace["customdata"][i][1]
            points += 1
    assert points == len(DURABILITY_CELLS)  # the refused cell has nothing to draw
    assert drawn["figure"]["layout"]["xaxis"].get("type", "linear") == "linear"  # 2.2 .. 12 ms


def test_availability_is_marked_on_the_points_of_its_settings(chart):
    _, drawn = chart
    traces = {trace["name"]: trace for trace in drawn["figure"]["data"]}
    assert {name: trace["text"] for name, trace in traces.items()} == {
        "availability unknown": ["yolo confluent", "p1 rf1 isr2 acks=all idem=off confluent"],
        "accepts writes with two brokers down": ["throughput-rf3 confluent"],
        "refuses writes with two brokers down": ["durable confluent"]}
    assert traces["refuses writes with two brokers down"]["marker"]["symbol"] == "square"
    assert traces["accepts writes with two brokers down"]["marker"]["symbol"] == "circle"
    assert traces["availability unknown"]["marker"]["symbol"] == "circle-open"
    assert drawn["figure"]["layout"]["showlegend"] is True and "Marker:" in drawn["caption"]


def test_a_wide_latency_spread_gets_a_log_axis_and_no_availability_no_legend(tmp_path):
    cells = dict(DURABILITY_CELLS)
    cells["yolo confluent"] = (*cells["yolo confluent"][:6], (500.0, 520.0, 510.0))
    durability_result(tmp_path / "d", cells=cells)
    result = collect([tmp_path])["results"][0]
    drawn = {c["chart"]: c for c in result_charts(result)}["durability-cost"]["figure"]
    assert drawn["layout"]["xaxis"]["type"] == "log" and 500 in drawn["layout"]["xaxis"]["tickvals"]
    assert drawn["layout"]["showlegend"] is False
    [trace] = drawn["data"]
    assert trace["name"] == "availability unknown" and trace["x"][-1] == 510.0


def test_the_html_report_draws_the_chart_and_both_tables(chart, probed):
    root, _ = probed
    html = render_html(collect([root]))
    figures = json.loads(re.search(r'<script type="application/json" id="kb-figures">(.*?)</script>', html, re.S).group(1))
    result, drawn = chart
    assert figures[drawn["id"]] == drawn["figure"]
    assert "availability per distinct RF / min.insync / acks" in html and "29,500..30,000" in html


# ---- the CSV ----

def test_the_csv_has_one_row_per_run_with_the_cells_settings(probed):
    root, document = probed
    written = list(csv.DictReader(io.StringIO(csv_export.to_csv(collect([root])))))
    assert {f"params.{name}" for name in CELL_PARAMS} <= set(written[0])
    assert len(written) == len(document.runs) == 4 * 3 * 2
    for row, run in zip(written, document.runs):
        assert {name: row[f"params.{name}"] for name in CELL_PARAMS} == {name: str(run.params[name]) for name in CELL_PARAMS}
        assert (row["scenario"], float(row["throughput.records_per_s"])) == (run.scenario, run.throughput["records_per_s"])
    assert written[0]["params.cell"] == "yolo confluent" and written[0]["params.acks"] == "1"
    failed = [(row["params.cell"], row["params.repeat"], row["error"]) for row in written if row["error"]]
    assert failed == [("durable confluent", "2", "no progress for 60 s")] * 2


def test_different_answers_paused_and_killed_get_their_own_mark(tmp_path):
    def unanswered_when_paused(groups):
        groups[2]["steps"][1].update(writes="no answer", acked=0, refusal=None)

    with_availability(tmp_path, unanswered_when_paused)
    result = collect([tmp_path])["results"][0]
    durable = next(cell for cell in result["durability_cells"] if cell["label"] == "durable confluent")
    assert durable["writes"] == ["no answer", "refused"]
    traces = {c["chart"]: c for c in result_charts(result)}["durability-cost"]["figure"]["data"]
    [marked] = [trace for trace in traces if trace["text"] == ["durable confluent"]]
    assert marked["name"] == ("leaves writes unanswered with two brokers paused and refuses writes with two brokers "
                              "killed") and marked["marker"]["symbol"] == "star"


def test_another_tools_figures_are_a_reference_row_and_no_point(tmp_path):
    from kafkabench.core.results import Run

    document = durability_result(tmp_path / "d")
    label = "durable confluent (apache ProducerPerformance)"
    document.runs.append(Run(client="apache", scenario="produce", params={"cell": label, "repeat": 1, "tool": "ProducerPerformance"},
                             throughput={"records_per_s": 60_000.0}, counters={"acked": 20_000}, duration_s=0.33))
    assert kinds(document)[label] == "reference" and kinds(document)["durable"] == ""
    # its row has the settings of the cell it ran beside; the title names the tool
    assert {k: v for k, v in rows(document)[label].items() if k not in report.NAMES} == {
        **{k: v for k, v in rows(document)["durable"].items() if k not in report.NAMES}, "client": "apache"}
    assert "apache: Apache's ProducerPerformance" in report.cells_table(document).title
    assert (rows(document)[label]["records/s"], rows(document)[label]["publish p99"], rows(document)[label]["p99 CI"]) == (
        "60,000", "-", "-")
    assert label not in [cell["label"] for cell in report.chart_cells(document) if cell["publish_p99_ms"] is not None]



def test_a_run_says_first_whether_its_repeats_can_decide_vs_fastest():
    from kafkabench.report.family import decides_text

    too_few = decides_text("vs fastest", 2, 3, 0.05, "--repeats", "the column will read cannot decide")
    assert too_few == ("vs fastest: 2 tests judged together (q < 0.05): 3 repeats cannot decide any of them, 5 a side "
                       "can (--repeats); the column will read cannot decide")
    assert decides_text("vs fastest", 2, 6, 0.05, "--repeats", "") == ("vs fastest: 2 tests judged together (q < "
                                                                       "0.05); 6 repeats can decide them (5 needed)")

"""The delivery report's progress chart from what the lab records: fixed windows (a burst stays a window's worth, a
stall shows as windows at zero), the faults and the stalls marked, one cell at a time."""

from kafkabench.core.liveness import Track
from kafkabench.core.results import ResultDocument, Run, write_result
from kafkabench.labs.delivery.liveness import progress_timeline, verdict_row
from kafkabench.report import html
from kafkabench.report.collect import collect

T0 = 1000.0  # the run's start on the monotonic clock


def producer_cell() -> Run:
    # the partitions plan's case: 10,000 messages acknowledged within 5 ms at 10 s, as reports 5 ms apart saw them
    points = [(T0 + 0.2 * k, 0) for k in range(50)] + [(T0 + 10.000, 2_000), (T0 + 10.005, 10_000), (T0 + 12.0, 10_000)]
    run = Run(client="confluent", scenario="delivery", params={"settings": "async-close acks 1", "mode": "async-close"})
    run.timeline = progress_timeline({"acknowledged": [points]}, T0, T0 + 12.0)
    return run


def copier_cell() -> Run:
    # two copiers; copier 1.1 silent from 3 s, replaced at 9.5 s; its successor 1.2 from 10 s
    faults = [{"fault": "pause-consumer", "broker": None, "fired_s": 3.0, "healed_s": 17.0}]
    first, second, successor, track = [], [], [], Track()
    for k in range(40):
        t = k * 0.5
        second.append((T0 + t, 100 * k))
        if t <= 3.0:
            first.append((T0 + t, 100 * k))
            track.note(T0 + t, count=200 * k, waiting=True)
        elif t < 9.5:
            track.note(T0 + t, waiting=True)
        if t >= 10.0:
            successor.append((T0 + t, 100 * (k - 20)))
    run = Run(client="confluent", scenario="delivery", params={
        "settings": "copy rf3", "mode": "copy", "faults": faults,
        "liveness": [verdict_row("copier 1.1", "confluent", track, T0 + 9.5, "replaced", T0, faults)]})
    run.timeline = progress_timeline({"acknowledged": [[(T0 + 0.5 * k, 500 * k) for k in range(40)]],
                                      "processed": [first, second, successor],
                                      "committed": [first, second, successor]}, T0, T0 + 20.0)
    return run


def chart_of(tmp_path, runs):
    document = ResultDocument(lab="delivery", created_at="2026-11-28T10:00:00+00:00", command=["kafkabench"],
                              runs=runs)
    write_result(document, tmp_path)
    [result] = collect([tmp_path])["results"]
    drawn = {chart["chart"]: chart for chart in html.result_charts(result)}
    assert "throughput-timeline" not in drawn  # the lab draws its own timeline
    return drawn["delivery-progress"]


def test_a_burst_is_one_window_s_worth_not_a_spike_over_milliseconds(tmp_path):
    chart = chart_of(tmp_path, [producer_cell()])
    [acknowledged] = chart["figure"]["data"]
    assert max(acknowledged["y"]) == 10_000 and sum(acknowledged["customdata"]) == 10_000
    assert acknowledged["y"].count(0) == 11  # every other window of the 12 s: nothing acknowledged
    assert acknowledged["x"][10] == 10.5  # the window of 10 s to 11 s, drawn at its middle


def test_a_stall_shows_as_windows_without_progress_marked_with_how_it_ended(tmp_path):
    chart = chart_of(tmp_path, [producer_cell(), copier_cell()])
    figure = chart["figure"]
    [menu] = figure["layout"]["updatemenus"]
    assert [button["label"] for button in menu["buttons"]] == ["async-close acks 1 (confluent)", "copy rf3 (confluent)"]
    assert menu["active"] == 1  # the cell with a stall first
    shown = [trace for trace in figure["data"] if trace["visible"]]
    assert [trace["name"] for trace in shown] == ["acknowledged/s", "processed/s", "committed/s"]
    processed = shown[1]["y"]
    # both copiers' 200/s, copier 1.1's share gone from 3 s (the other's alone), back when 1.2 starts at 10 s
    assert processed == [200, 400, 400, 300, *[200] * 6, 300, *[400] * 9]
    stall, fault = sorted(figure["layout"]["shapes"], key=lambda shape: shape["fillcolor"] == "#6b7280")
    assert (stall["x0"], stall["x1"]) == (3.0, 9.5) and stall["label"]["text"] == "copier 1.1 6.5 s replaced"
    assert (fault["x0"], fault["x1"]) == (3.0, 17.0)


def test_the_partitions_plan_s_cell_draws_its_rate_per_window_not_a_spike(tmp_path):
    # a real result (tests/fixtures/results/delivery-partition): the partitions plan's acks=1 cell, 120,000 messages
    # at 2,000/s, the leader cut off for 40 s; the old chart drew one spike of 23.5 M records/s and zeros under it
    from pathlib import Path

    [result] = collect([Path(__file__).parents[2] / "fixtures" / "results" / "delivery-partition"])["results"]
    drawn = {chart["chart"]: chart for chart in html.result_charts(result)}
    [acknowledged] = drawn["delivery-progress"]["figure"]["data"]
    run = result["runs"][0]
    assert len(acknowledged["y"]) == len(run["timeline"]) == 61  # 1 s windows over the producer's 60.4 s
    assert sum(acknowledged["customdata"]) == run["counters"]["acknowledged"] == 120_000
    assert 2_000 <= max(acknowledged["y"]) < 4_000 and min(acknowledged["y"]) > 0  # no window without an ack
    [fault] = drawn["delivery-progress"]["figure"]["layout"]["shapes"]
    assert fault["label"]["text"] == "partition-leader 1" and fault["x1"] - fault["x0"] > 40


def test_the_publish_latency_per_window_is_drawn_on_its_own_axis_with_each_step_of_an_operation_marked(tmp_path):
    run = producer_cell()
    for entry in run.timeline:
        entry.update(publish_p50_ms=1.0, publish_p99_ms=4.0 if entry["records"] else None, publish_max_ms=9.0)
    run.params["faults"] = [{"fault": "rolling-restart", "broker": None, "fired_s": 2.0, "healed_s": 8.0,
                             "steps": [{"broker": 1, "stop_s": 2.0}, {"broker": 2, "stop_s": 5.0}]}]
    figure = chart_of(tmp_path, [run])["figure"]
    acknowledged, p99, top = figure["data"]
    assert (p99["name"], p99["yaxis"], top["name"]) == ("publish p99 ms", "y2", "publish max ms")
    assert p99["y"].count(None) == 11 and 4.0 in p99["y"]  # a window with nothing acknowledged: a gap, not 0
    assert figure["layout"]["yaxis2"]["type"] == "log" and figure["layout"]["yaxis2"]["overlaying"] == "y"
    band, *steps = figure["layout"]["shapes"]
    assert band["label"]["text"] == "rolling-restart"  # an operation has no broker of its own
    assert [(step["x0"], step["label"]["text"]) for step in steps] == [(2.0, "broker 1"), (5.0, "broker 2")]

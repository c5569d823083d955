"""The capacity labs' report parts from hand-made results: the step table, the answer line, why steps failed,
the latency-vs-rate chart; the backlog's phases and its answer, drained or not."""

from kafkabench.core.histogram import Stat
from kafkabench.core.results import ResultDocument, Run
from kafkabench.labs import registry


def step(kind, offered, verdict, p99, reasons=()):
    return {"kind": kind, "offered": offered, "achieved": offered if offered > 0 else 50_000, "mb_per_s": 1.0,
            "errors": 0, "percentiles_ms": {"p99": [p99, p99 * 0.9, p99 * 1.1]} if kind != "probe" else {},
            "lag_slope_s_per_s": [0.001, -0.002, 0.004] if kind != "probe" else None, "verdict": verdict,
            "reasons": list(reasons), "error": None}


def search_document() -> ResultDocument:
    steps = [step("probe", -1, "fail", 0), step("search", 10_000, "pass", 12.0), step("search", 20_000, "fail", 80.0,
             ["e2e p99 80 ms (95 % up to 88) > 50 ms"]), step("search", 14_142, "pass", 30.0),
             step("hold", 14_142, "pass", 31.0)]
    stat = Stat(count=100, mean_ms=5, p50_ms=4, p90_ms=9, p99_ms=30, p999_ms=40, max_ms=50, min_ms=1)
    runs = [Run(client="confluent", scenario=s["kind"], params={"step": i + 1, "offered_rate": s["offered"]},
                stats={"e2e": stat} if s["kind"] != "probe" else {}) for i, s in enumerate(steps)]
    params = {"client": "confluent", "size": 100, "producers": 1, "consumers": 1, "partitions": 1,
              "replication_factor": 1, "slo": ["p99=50ms"], "metric": "e2e", "steps": steps,
              "stop_reason": "bracketed within 50%: 14,142 passed, 20,000 failed",
              "sustainable": {"records_per_s": 14_142, "mb_per_s": 1.35, "held": True,
                              "percentiles_ms": {"p99": [31.0, 27.9, 34.1]}, "next_failed": 20_000,
                              "next_reasons": ["e2e p99 80 ms (95 % up to 88) > 50 ms"]}}
    return ResultDocument(lab="max-rate", created_at="2026-11-26T00:00:00+00:00", params=params, runs=runs)


def test_the_search_reads_as_a_row_per_step_then_its_answer():
    lab, document = registry.get("max-rate"), search_document()
    [table] = lab.tables(document)
    assert [c.name for c in table.columns] == ["step", "kind", "offered/s", "achieved/s", "MB/s",
                                               "e2e p99 (95 % up to)", "lag ms/s", "verdict"]
    assert [row.cells[:4] for row in table.rows][:3] == [["1", "probe", "unpaced", "50,000"],
                                                         ["2", "search", "10,000", "10,000"],
                                                         ["3", "search", "20,000", "20,000"]]
    assert table.rows[2].cells[5:] == ["80.00 (88.00)", "+1.0", "fail"] and table.rows[0].cells[-1] == "-"
    assert lab.headline(document) == ("sustainable: 14,142 records/s (1.4 MB/s) with e2e p99 31.00 ms <= 50 ms, held; "
                                      "next step 20,000 failed: e2e p99 80 ms (95 % up to 88) > 50 ms")
    assert lab.lines(document) == ["step 3 failed: e2e p99 80 ms (95 % up to 88) > 50 ms",
                                   "stopped: bracketed within 50%: 14,142 passed, 20,000 failed", lab.headline(document)]


def test_the_chart_puts_every_step_but_the_probe_against_its_rate_with_the_slo_and_the_found_rate():
    lab, document = registry.get("max-rate"), search_document()
    entry = {"id": "r1"}
    lab.annotate(document, entry)
    [chart] = lab.charts(entry)
    traces = chart["figure"]["data"]
    assert [t["name"] for t in traces] == ["e2e p50", "e2e p99", "e2e p99.9", "achieved records/s"]
    assert traces[1]["x"] == [10_000, 14_142, 14_142, 20_000] and traces[1]["y"] == [30, 30, 30, 30]
    shapes = chart["figure"]["layout"]["shapes"]
    assert [(s["y0"], s["x0"]) for s in shapes] == [(50, 0), (0, 14_142)]


def test_no_rate_sustained_is_said_with_why_the_search_stopped():
    document = search_document()
    document.params.update(sustainable=None, stop_reason="failed at the floor, 1 records/s")
    assert registry.get("max-rate").headline(document) == "no rate sustained: failed at the floor, 1 records/s"


def backlog_document(drained: bool) -> ResultDocument:
    figures = {"built_bytes": 2_000_000_000, "built_records": 2_000_000, "build_s": 40.0, "drained": drained,
               "drain_s": 12.5 if drained else None, "catch_up_records_per_s": 160_000 if drained else 45_000,
               "produce_records_per_s": 50_000}
    if not drained:
        figures.update(left_records=1_500_000, projected_drain_s=None)
    stat = Stat(count=10, mean_ms=5, p50_ms=4, p90_ms=9, p99_ms=30, p999_ms=40, max_ms=50, min_ms=1)
    runs = [Run(client="confluent", scenario=f"{phase} {role}", params={"phase": phase, "role": role},
                stats={"e2e" if role == "consume" else "publish_latency": stat},
                throughput={"records_per_s": 50_000.0, "payload_mb_per_s": 47.7}, counters={"records": 1000})
            for phase, role in (("build", "produce"), ("drain", "produce"), ("drain", "consume"))]
    return ResultDocument(lab="backlog", created_at="2026-11-26T00:00:00+00:00", runs=runs, params={
        "client": "confluent", "size": 1000, "rate": 50_000, "consumers": 1, "partitions": 1, "max_drain": 300,
        "backlog": figures})


def test_a_backlog_says_how_long_it_took_or_why_it_never_would():
    lab = registry.get("backlog")
    assert lab.headline(backlog_document(True)) == (
        "drained a backlog of 2,000 MB (2,000,000 records, 40.0 s) in 12.5 s: consumers read 160,000 records/s while "
        "producers sent 50,000")
    assert lab.headline(backlog_document(False)) == (
        "not drained within 300 s: consumers read 45,000 records/s while producers sent 50,000; 1,500,000 records "
        "left, it never would: the consumers read no faster than the producers write")
    [table] = lab.tables(backlog_document(True))
    assert [row.cells[:2] + row.cells[5:7] for row in table.rows] == [["build", "produce", "publish", "4.00"],
                                                                      ["drain", "produce", "publish", "4.00"],
                                                                      ["drain", "consume", "e2e", "4.00"]]


def test_several_searches_give_the_answer_with_their_range_and_say_when_they_disagree():
    lab, document = registry.get("max-rate"), search_document()
    for s in document.params["steps"][1:4]:
        s["search"] = 1
    document.params.update(precision=0.05, searches=3)
    document.params["sustainable"].update(
        holds_failed=[16_000], searches={"count": 3, "found": [14_142, 22_627, 11_314], "median": 14_142,
                                         "low": 11_314, "high": 22_627, "spread": 1.0, "none": 0})
    [table] = lab.tables(document)
    assert [row.cells[1] for row in table.rows] == ["probe", "search 1", "search 1", "search 1", "hold"]
    assert lab.headline(document) == (
        "sustainable: 14,142 records/s (1.4 MB/s) with e2e p99 31.00 ms <= 50 ms, held (after the holds at 16,000 "
        "failed); 3 searches found 11,314 .. 22,627 (median 14,142); next step 20,000 failed: e2e p99 80 ms (95 % up "
        "to 88) > 50 ms")
    assert lab.lines(document)[-2] == ("searches disagree by 100%: this cluster's capacity moved while it was "
                                       "measured; see the steps")
    document.params["sustainable"]["searches"].update(spread=0.04, low=13_600, high=14_142)
    assert not any(line.startswith("searches disagree") for line in lab.lines(document))


def test_one_search_says_its_spread_is_unknown_and_an_unsure_rate_says_so():
    document = search_document()
    document.params["sustainable"].update(held=False, unsure=True, next_failed=None, searches={
        "count": 1, "found": [14_142], "median": 14_142, "low": 14_142, "high": 14_142, "spread": 0.0, "none": 0})
    assert registry.get("max-rate").headline(document) == (
        "sustainable: 14,142 records/s (1.4 MB/s) with e2e p99 31.00 ms <= 50 ms, unsure (a step at it failed, its "
        "confirm passed); 1 search: the answer's spread is unknown (--searches 2 or more measure it)")


def test_no_hold_passing_says_which_failed_and_why_they_stopped():
    document = search_document()
    document.params.update(sustainable=None, hold_results={"held": None, "failed": [1_000, 500], "stop_reason":
                                                           "the hold failed at the floor, 1 records/s"})
    assert registry.get("max-rate").headline(document) == (
        "no rate sustained: no hold passed (1,000, 500 failed; the hold failed at the floor, 1 records/s)")
